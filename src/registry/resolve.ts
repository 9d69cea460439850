/**
 * A request's Host to a registered site, with no D1 query on the hot path (docs/tenants.md
 * "Resolving a host"). Each isolate keeps the registry's live sites — each record whole: settings,
 * token hash, update time, what a request needs — read in one query at most once per `ttlMs`
 * (MANIFEST_CACHE_TTL). A known origin then costs a map lookup, and an unknown one — a flood of
 * random hosts included — nothing more than that, since the list says it is not there; at 20,000
 * sites neither reads D1 (bench/registry-resolve.bench.ts). Once the list is older than `ttlMs`, a
 * read for a listed origin is answered from it while it is read again in the background, and one
 * for an origin not on it waits for that read (shared by every request meanwhile), so a new site
 * serves within `ttlMs` of its creation. That background answer is bounded: a list older than
 * twice `ttlMs` (an isolate that sat idle) is never answered from — every read waits for it read
 * again — so a deleted or re-registered site is never served with a record older than that. A write or a job (`fresh`) never acts on a stale list: it
 * waits for the list read again, so a deleted site stops taking writes and running jobs in every
 * isolate within `ttlMs` of its DELETE. The isolate that ran the DELETE drops it at once (`forget`);
 * the one that registered a site serves it at once (`remember`). A write or job for an origin a list
 * younger than `ttlMs` lacks (a site registered in another isolate since) reads that origin from the
 * registry (one indexed query) before it is refused; the origin is then not read again for `ttlMs`,
 * and an isolate reads at most MISS_READS_PER_TTL such origins per `ttlMs`, so a flood of writes to
 * unknown hosts costs at most that many queries per isolate and `ttlMs`. Sitemap GETs never do: an
 * unknown host there costs no query.
 */
import type { RegisteredSite, SiteRegistry } from "./store.ts";

/** Origins missing from a young list a write or job may read from the registry, per isolate and `ttlMs`. */
const MISS_READS_PER_TTL = 100;
/** Origins remembered as read and not found (the negative cache); the oldest goes first. */
const MISSES_KEPT = 1_000;

export class RegistryResolver {
  readonly #registry: SiteRegistry;
  readonly #ttlMs: number;
  #list: Map<string, RegisteredSite> | null = null;
  #loadedAt = 0;
  #loading: Promise<Map<string, RegisteredSite>> | null = null;
  /** Origins read from the registry on a miss, and when: none is read again within `ttlMs`. */
  readonly #missed = new Map<string, number>();
  #missWindowAt = 0;
  #missReads = 0;

  constructor(registry: SiteRegistry, ttlMs: number) {
    this.#registry = registry;
    this.#ttlMs = ttlMs;
  }

  /**
   * The live registered site at `origin`, or null. `waitUntil` carries a background refresh.
   * `fresh`: the caller writes or runs a job, so a stale list is read again first, whatever it says.
   */
  async resolve(origin: string, now: number, waitUntil: (p: Promise<unknown>) => void, fresh = false): Promise<RegisteredSite | null> {
    let list = this.#list;
    const age = now - this.#loadedAt;
    const stale = list === null || age >= this.#ttlMs;
    const tooOld = age >= 2 * this.#ttlMs;
    const reload = list === null || (stale && (fresh || tooOld || !list.has(origin)));
    if (reload) list = await this.#load(now);
    else if (stale) waitUntil(this.#load(now).catch((error: unknown) => console.error("site registry: the list could not be read again", error)));
    const site = list!.get(origin) ?? null;
    return site !== null || !fresh || reload ? site : this.#readMiss(origin, now);
  }

  /** `origin`, missing from a young list, read from the registry: at most once per `ttlMs`, and MISS_READS_PER_TTL origins per `ttlMs`. */
  async #readMiss(origin: string, now: number): Promise<RegisteredSite | null> {
    const readAt = this.#missed.get(origin);
    if (readAt !== undefined && now - readAt < this.#ttlMs) return null;
    if (now - this.#missWindowAt >= this.#ttlMs) {
      this.#missWindowAt = now;
      this.#missReads = 0;
    }
    if (this.#missReads >= MISS_READS_PER_TTL) return null;
    this.#missReads++;
    this.#missed.delete(origin);
    if (this.#missed.size >= MISSES_KEPT) this.#missed.delete(this.#missed.keys().next().value!);
    this.#missed.set(origin, now);
    const site = await this.#registry.get(origin);
    if (site === null || site.deletedAt !== null) return null;
    this.#missed.delete(origin);
    this.#list?.set(origin, site);
    return site;
  }

  /** This isolate serves `site` as it now is at once (its registration or PATCH ran here); the others within `ttlMs`. */
  remember(site: RegisteredSite): void {
    this.#list?.set(site.origin, site);
  }

  /** This isolate stops serving `origin` at once (its DELETE ran here). */
  forget(origin: string): void {
    this.#list?.delete(origin);
  }

  #load(now: number): Promise<Map<string, RegisteredSite>> {
    this.#loading ??= this.#registry
      .liveSites()
      .then((sites) => {
        this.#list = new Map(sites.map((s) => [s.origin, s]));
        this.#loadedAt = now;
        return this.#list;
      })
      .finally(() => {
        this.#loading = null;
      });
    return this.#loading;
  }
}
