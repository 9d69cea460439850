/**
 * A request's Host to a registered site, with no D1 query on the hot path (docs/tenants.md
 * "Resolving a host"). Each isolate keeps the registry's live origins with their update times, read
 * in one query at most once per `ttlMs` (MANIFEST_CACHE_TTL): a known origin then costs a map
 * lookup, and an unknown one — a flood of random hosts included — costs nothing more than that,
 * since the list says it is not there. A site's record is read once per isolate and kept until the
 * list shows it updated. Once the list is older than `ttlMs`, a request for a listed origin is
 * answered from it while it is read again in the background; one for an origin not on it waits for
 * that read (shared by every request meanwhile), so a new site serves within `ttlMs` of its creation
 * in every isolate, and at once in the one that registered it (`remember`). A deleted site is dropped from this isolate's list at once (`forget`) and from the others' within
 * `ttlMs`.
 */
import type { RegisteredSite, SiteRegistry } from "./store.ts";

/** Sites' records kept per isolate at most (the list itself has every live origin). */
const SITES_KEPT = 5_000;

export class RegistryResolver {
  readonly #registry: SiteRegistry;
  readonly #ttlMs: number;
  #list: Map<string, number> | null = null;
  #loadedAt = 0;
  #loading: Promise<Map<string, number>> | null = null;
  readonly #sites = new Map<string, RegisteredSite>();

  constructor(registry: SiteRegistry, ttlMs: number) {
    this.#registry = registry;
    this.#ttlMs = ttlMs;
  }

  /** The live registered site at `origin`, or null. `waitUntil` carries a background refresh. */
  async resolve(origin: string, now: number, waitUntil: (p: Promise<unknown>) => void): Promise<RegisteredSite | null> {
    let list = this.#list;
    const stale = list === null || now - this.#loadedAt >= this.#ttlMs;
    if (list === null || (stale && !list.has(origin))) list = await this.#load(now);
    else if (stale) waitUntil(this.#load(now).catch((error: unknown) => console.error("site registry: the list could not be read again", error)));
    const updatedAt = list.get(origin);
    if (updatedAt === undefined) return null;
    const kept = this.#sites.get(origin);
    if (kept && kept.updatedAt === updatedAt) return kept;
    const site = await this.#registry.get(origin);
    if (!site || site.deletedAt !== null) return null;
    if (this.#sites.size >= SITES_KEPT) this.#sites.delete(this.#sites.keys().next().value!);
    this.#sites.set(origin, site);
    return site;
  }

  /** This isolate serves a site at once (its registration ran here); a list read later has it too. */
  remember(site: RegisteredSite): void {
    this.#list?.set(site.origin, site.updatedAt);
    if (this.#sites.size >= SITES_KEPT) this.#sites.delete(this.#sites.keys().next().value!);
    this.#sites.set(site.origin, site);
  }

  /** This isolate stops serving `origin` at once (its DELETE ran here). */
  forget(origin: string): void {
    this.#list?.delete(origin);
    this.#sites.delete(origin);
  }

  #load(now: number): Promise<Map<string, number>> {
    this.#loading ??= this.#registry
      .live()
      .then((rows) => {
        this.#list = new Map(rows.map((r) => [r.origin, r.updatedAt]));
        this.#loadedAt = now;
        return this.#list;
      })
      .finally(() => {
        this.#loading = null;
      });
    return this.#loading;
  }
}
