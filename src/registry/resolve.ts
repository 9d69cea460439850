/**
 * A request's Host to a registered site, with no D1 query on the hot path (docs/tenants.md
 * "Resolving a host"). Each isolate keeps the registry's live sites, read in one query at most once
 * per `ttlMs` (MANIFEST_CACHE_TTL): each with its origin, token hash and update time, and its
 * settings when they are small (at most `LISTED_SETTINGS_BYTES`), so that a known origin costs a map
 * lookup and an unknown one — a flood of random hosts included — nothing more than that, since the
 * list says it is not there; at 20,000 sites neither reads D1 (bench/registry-resolve.bench.ts).
 * A site whose settings are larger is listed without them and its whole record read once, on its
 * first request, into a cache bounded in bytes (`RECORDS_BYTES`, least recently used dropped): what
 * the isolate holds is bounded by construction, ~300 bytes a listed site plus that cache, whatever
 * the sites' settings weigh (20,000 sites of 16 KB each would otherwise be ~320 MB, over the
 * isolate's 128 MB; src/registry/resolve.test.ts measures it).
 *
 * Once the list is older than `ttlMs`, a read for a listed origin is answered from it while it is
 * read again in the background, and one for an origin not on it waits for that read (shared by
 * every request meanwhile), so a new site serves within `ttlMs` of its creation. That background
 * answer is bounded: a list older than twice `ttlMs` (an isolate that sat idle) is never answered
 * from — every read waits for it read again — so a deleted or re-registered site is never served
 * with a record older than that. A write or a job (`fresh`) never acts on a stale list: it waits for
 * the list read again, so a deleted site stops taking writes and running jobs in every isolate
 * within `ttlMs` of its DELETE. The isolate that ran the DELETE drops it at once (`forget`); the one
 * that registered a site serves it at once (`remember`). A write or job for an origin a list
 * younger than `ttlMs` lacks (a site registered in another isolate since) reads that origin from the
 * registry (one indexed query) before it is refused; the origin is then not read again for `ttlMs`,
 * and an isolate reads at most MISS_READS_PER_TTL such origins per `ttlMs`, so a flood of writes to
 * unknown hosts costs at most that many queries per isolate and `ttlMs`. Sitemap GETs never do: an
 * unknown host there costs no query.
 */
import { ByteLru } from "./byte-lru.ts";
import { originHost } from "./own-host.ts";
import type { ListedSite, RegisteredSite, SiteRegistry } from "./store.ts";

/** Settings (stored JSON, UTF-8) up to this size come with the list; the bench's typical site has ~150 bytes. */
export const LISTED_SETTINGS_BYTES = 512;
/** The whole records of sites of larger settings kept per isolate, in (estimated) bytes. */
export const RECORDS_BYTES = 8 * 1024 * 1024;

/** What a record weighs in the isolate: its strings at two bytes a character (the worst of V8's forms), and the objects around them. */
export function recordBytes(site: RegisteredSite): number {
  let chars = site.origin.length + site.tokenHash.length;
  for (const [name, value] of Object.entries(site.settings)) chars += name.length + value.length;
  return 2 * chars + 256;
}

const whole = (listed: ListedSite): RegisteredSite | null => (listed.settings === null ? null : (listed as RegisteredSite));

/** The hosts of the live registered sites on an isolate's list, and a version that changes only when they do. */
export interface RegisteredHosts {
  hosts: ReadonlySet<string>;
  version: number;
}

/** Origins missing from a young list a write or job may read from the registry, per isolate and `ttlMs`. */
const MISS_READS_PER_TTL = 100;
/** Origins remembered as read and not found (the negative cache); the oldest goes first. */
const MISSES_KEPT = 1_000;

export class RegistryResolver {
  readonly #registry: SiteRegistry;
  readonly #ttlMs: number;
  #list: Map<string, ListedSite> | null = null;
  #loadedAt = 0;
  #loading: Promise<Map<string, ListedSite>> | null = null;
  /** The whole records of listed sites whose settings the list leaves out. */
  readonly #records = new ByteLru<RegisteredSite>(RECORDS_BYTES);
  /** Their reads under way, one per origin however many requests wait for it. */
  readonly #reading = new Map<string, Promise<RegisteredSite | null>>();
  /** The list's hosts, worked out when first asked after each read of it (null: not yet for this list). */
  #hostsOf: Map<string, ListedSite> | null = null;
  #hosts: RegisteredHosts = { hosts: new Set(), version: 0 };
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
    const listed = list!.get(origin);
    if (listed) return whole(listed) ?? this.#record(listed);
    return !fresh || reload ? null : this.#readMiss(origin, now);
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
    this.remember(site);
    return site;
  }

  /** This isolate serves `site` as it now is at once (its registration or PATCH ran here); the others within `ttlMs`. */
  remember(site: RegisteredSite): void {
    if (!this.#list) return;
    const small = new TextEncoder().encode(JSON.stringify(site.settings)).length <= LISTED_SETTINGS_BYTES;
    this.#list.set(site.origin, small ? site : { ...site, settings: null });
    if (small) this.#records.delete(site.origin);
    else this.#records.set(site.origin, site, recordBytes(site));
    this.#hostsOf = null;
  }

  /** This isolate stops serving `origin` at once (its DELETE ran here). */
  forget(origin: string): void {
    this.#list?.delete(origin);
    this.#hostsOf = null;
    this.#records.delete(origin);
  }

  /**
   * The hosts of the live registered sites on this isolate's list as it is, no query (null before it
   * was first read): what a registered site's settings naming hosts are checked against at use
   * (src/registry/settings.ts). Worked out once per read of the list (one pass, string operations: a
   * few milliseconds at 20,000 sites); its version moves only when the hosts do, so the sites wired
   * with them are wired again only then.
   */
  hosts(): RegisteredHosts | null {
    const list = this.#list;
    if (list === null) return null;
    if (this.#hostsOf !== list) {
      const hosts = new Set<string>();
      for (const origin of list.keys()) hosts.add(originHost(origin));
      const before = this.#hosts.hosts;
      let same = hosts.size === before.size;
      if (same) for (const host of hosts) if (!before.has(host)) same = false;
      if (!same) this.#hosts = { hosts, version: this.#hosts.version + 1 };
      this.#hostsOf = list;
    }
    return this.#hosts;
  }

  /** The hosts as `hosts()` gives them, from a list read again first when it is older than the TTL (a settings write, a job's walk). */
  async currentHosts(now: number): Promise<RegisteredHosts> {
    if (this.#list === null || now - this.#loadedAt >= this.#ttlMs) await this.#load(now);
    return this.hosts()!;
  }

  /** The estimated bytes of the whole records kept beside the list (≤ RECORDS_BYTES). */
  get recordBytes(): number {
    return this.#records.bytes;
  }

  /** A listed site's whole record: kept if as new as the list's, else read (one query by its key), then kept. */
  #record(listed: ListedSite): Promise<RegisteredSite | null> {
    const kept = this.#records.get(listed.origin);
    if (kept && kept.updatedAt >= listed.updatedAt) return Promise.resolve(kept);
    let reading = this.#reading.get(listed.origin);
    if (!reading) {
      reading = this.#registry
        .get(listed.origin)
        .then((site) => {
          if (!site || site.deletedAt !== null) return null;
          this.#records.set(site.origin, site, recordBytes(site));
          return site;
        })
        .finally(() => this.#reading.delete(listed.origin));
      this.#reading.set(listed.origin, reading);
    }
    return reading;
  }

  #load(now: number): Promise<Map<string, ListedSite>> {
    this.#loading ??= this.#registry
      .liveSites(LISTED_SETTINGS_BYTES)
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
