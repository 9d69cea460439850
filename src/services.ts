/** Wires adapters to config, once per `env`: the only place that knows which store backs what. */
import { D1AdminStateStore } from "./adapters/d1/admin-state.ts";
import { D1CrawlerLog } from "./adapters/d1/crawler-log.ts";
import { D1DatabaseIdentity } from "./adapters/d1/database-identity.ts";
import { D1GscStatusStore } from "./adapters/d1/gsc-status.ts";
import { D1Housekeeping } from "./adapters/d1/housekeeping.ts";
import { D1JobStateStore } from "./adapters/d1/job-state.ts";
import { D1ManifestStore } from "./adapters/d1/manifest-store.ts";
import { D1MirrorStateStore } from "./adapters/d1/mirror-state.ts";
import { D1NotifyStateStore } from "./adapters/d1/notify-state.ts";
import { D1LayoutStore } from "./adapters/d1/partition-layout.ts";
import { d1RecordStore } from "./adapters/d1/record-store.ts";
import { D1RegenStore } from "./adapters/d1/regen-store.ts";
import type { ServedUnder } from "./adapters/d1/served.ts";
import { D1SitePurge } from "./adapters/d1/site-purge.ts";
import { D1SiteRegistry } from "./adapters/d1/site-registry.ts";
import { faultAfterRecords, faultyRecordStore } from "./adapters/faulty/faulty-store.ts";
import { KvAdminStateStore } from "./adapters/kv/admin-state.ts";
import { KvCrawlerRangeStore } from "./adapters/kv/crawler-range-store.ts";
import { KvManifestStore } from "./adapters/kv/manifest-store.ts";
import type { SiteWriters } from "./adapters/kv/object-protocol.ts";
import { kvRecordStore } from "./adapters/kv/record-store.ts";
import { KvRobotsLastGoodStore } from "./adapters/kv/robots-last-good.ts";
import { KvRobotsLoopStore } from "./adapters/kv/robots-loop.ts";
import { KvSnapshotStore } from "./adapters/kv/snapshot-store.ts";
import { type Config, ConfigError, loadConfig } from "./config.ts";
import type { AnalyticsSink } from "./crawlers/types.ts";
import type { RegisteredSites } from "./jobs/context.ts";
import { PartitionedJobs } from "./jobs/partitions.ts";
import { type JobQueue, JobScheduler } from "./jobs/scheduler.ts";
import { InvalidatingManifestStore } from "./manifest/location-cache.ts";
import type { ManifestStore } from "./manifest/manifest.ts";
import { DatabaseList, checkedLayoutOf, checkedSync, checkedWriter } from "./partitions/database-list.ts";
import { shardBase } from "./partitions/keys.ts";
import { type SiteLayout, siteLayout } from "./partitions/layout.ts";
import { pinnedLayout } from "./partitions/pinned.ts";
import { servedStore, servedUnder } from "./partitions/served.ts";
import { partitionedServices } from "./partitions/services.ts";
import { ByteLru } from "./registry/byte-lru.ts";
import { namesHosts } from "./registry/hosts.ts";
import { type SitePurgeStore, purgeEverywhere } from "./registry/purge.ts";
import { RegistryResolver, recordBytes } from "./registry/resolve.ts";
import { registeredSiteConfig, registeredSiteEnv } from "./registry/settings.ts";
import type { RegisteredSite, SiteRegistry } from "./registry/store.ts";
import type { Services } from "./services-type.ts";

/** A binding the configuration needs, or a ConfigError naming it. */
function binding<T>(env: Env, name: "DB" | "URLS" | "KV_WRITERS", why: string): T {
  const value = (env as unknown as Record<string, unknown>)[name];
  if (!value) throw new ConfigError(name, `binding is missing: ${why}`);
  return value as T;
}

const cache = new WeakMap<object, Services>();

/**
 * Services per D1 database (SITE_DATABASES): one `env` per binding, the same as `env` but with that
 * binding as `DB`, so every D1 store of a site (records, manifests, regeneration and notification
 * state) lives in the site's own database. Each one's `config.sites` holds only its sites, so the
 * cron's per-site loops visit every site exactly once, against the right database.
 *
 * A site given several bindings is partitioned (src/partitions/): one services object per binding
 * (a partition: its share of the records, its manifest, change feed and regeneration state), and
 * one for the site that reads and writes across them (`partitions` lists the former). A site listed
 * with one database gets services of its own too (`ownServices`), its writes checked against the
 * database recorded for it.
 */
interface Wired {
  byDatabase: Map<string, Services>;
  ownServices: Map<string, Services>;
}

const wiredByEnv = new WeakMap<object, Wired>();

function wired(env: Env): Wired {
  let out = wiredByEnv.get(env);
  if (out) return out;
  const config = loadConfig(env);
  const raw = env as unknown as Record<string, unknown>;
  const sitesOf = new Map<string, Set<string>>([["DB", new Set()]]);
  const ownServices = new Map<string, Services>();
  // Every database a listed site may have lived in before its list changed: each D1 database bound, DB first.
  const bound = boundDatabases(env).map((name) => ({ binding: name, store: new D1DatabaseIdentity(raw[name] as D1Database) }));
  const databaseListOf = (origin: string, names: readonly string[]) =>
    new DatabaseList(
      origin,
      names.map((name) => ({ binding: name, store: new D1DatabaseIdentity(raw[name] as D1Database) })),
      bound,
    );
  for (const origin of config.sites) {
    const names = config.siteDatabases.get(origin) ?? ["DB"];
    for (const name of names) {
      if (config.siteDatabases.has(origin) && !raw[name]) {
        throw new ConfigError("SITE_DATABASES", `binding "${name}" of a listed site is not bound to this Worker`);
      }
    }
    if (names.length > 1) {
      const sites = new Set([origin]);
      // The layout (how many partitions hold records, a move under way) lives in the first database.
      const layouts = new D1LayoutStore(raw[names[0]!] as D1Database);
      // Each partition's queries see the rows it serves under the layout read when they run (migration 0024).
      const wiredParts = names.map((name, p) =>
        wire(
          { ...env, DB: raw[name] } as Env,
          { ...config, sites, shardBase: new Map([[origin, shardBase(p)]]) },
          servedUnder(() => layoutOf(), p),
        ),
      );
      // Which database each partition is, checked before the layout is read: every read and write by partition reads it first.
      const databaseList = databaseListOf(origin, names);
      const layoutOf = checkedLayoutOf(databaseList, () =>
        siteLayout(
          layouts,
          origin,
          wiredParts.map((p) => p.store.changes),
        ),
      );
      const layout: SiteLayout = {
        read: layoutOf,
        save: (l, now) => layouts.save(origin, l, now),
        loadBuild: () => layouts.loadBuild(origin),
        saveBuild: (l, build, now) => layouts.saveBuild(origin, l, build, now),
      };
      const parts = wiredParts.map((part, p) => ({
        ...part,
        store: servedStore(part.store, p, layoutOf),
        layouts: layout,
        // Its regeneration and notification jobs carry its partition, claimed in its own database.
        jobs: part.jobs?.forPartition(p) ?? null,
      }));
      const site = partitionedServices({ ...config, sites }, parts, layoutOf);
      // One per count, kept with the wiring: every shard a crawler reads through the index asks for one.
      const pinnedSites = new Map<number, Services>();
      const servedAs = (n: number): Services => {
        let pinnedSite = pinnedSites.get(n);
        if (!pinnedSite) {
          const pinned = async () => {
            await databaseList.assert();
            return pinnedLayout(n);
          };
          const first = wiredParts.slice(0, n).map((part, p) => ({ ...part, store: servedStore(part.store, p, pinned) }));
          pinnedSites.set(n, (pinnedSite = partitionedServices({ ...config, sites }, first, pinned)));
        }
        return pinnedSite;
      };
      const home = wiredParts[0]!.jobs;
      ownServices.set(origin, {
        ...site,
        // A sync's commit and abort read no layout: the list is checked before them too.
        store: { ...site.store, sync: site.store.sync && checkedSync(databaseList, site.store.sync) },
        servedAs,
        databaseList,
        jobs:
          home &&
          new PartitionedJobs(
            home,
            parts.map((p) => p.jobs!),
          ),
      });
      continue;
    }
    if (config.siteDatabases.has(origin) && config.urlSource === "d1") {
      // Listed with one database: its own services, whose writes and syncs check the list first (the first use records it).
      const databaseList = databaseListOf(origin, names);
      const own = wire({ ...env, DB: raw[names[0]!] } as Env, { ...config, sites: new Set([origin]) });
      const store = {
        ...own.store,
        writer: checkedWriter(databaseList, own.store.writer),
        sync: own.store.sync && checkedSync(databaseList, own.store.sync),
      };
      ownServices.set(origin, { ...own, store, databaseList });
      continue;
    }
    let set = sitesOf.get(names[0]!);
    if (!set) sitesOf.set(names[0]!, (set = new Set()));
    set.add(origin);
  }
  const byDatabase = new Map<string, Services>();
  for (const [name, sites] of sitesOf) {
    if (name === "DB" && config.siteDatabases.size === 0) {
      byDatabase.set(name, services(env));
      continue;
    }
    byDatabase.set(name, wire({ ...env, DB: raw[name] } as Env, { ...config, sites }));
  }
  out = { byDatabase, ownServices };
  wiredByEnv.set(env, out);
  return out;
}

/** The services of `origin`'s database (SITE_DATABASES; `DB` when not listed), or of its partitions. Throws ConfigError. */
export function servicesFor(env: Env, origin: string): Services {
  const w = wired(env);
  return w.ownServices.get(origin) ?? w.byDatabase.get(loadConfig(env).siteDatabases.get(origin)?.[0] ?? "DB")!;
}

/**
 * One services object per D1 database in use, each with only its sites in `config.sites`, and one
 * per partitioned site (its partitions in `partitions`) or site listed alone. Throws ConfigError.
 */
export function databaseServices(env: Env): Services[] {
  const w = wired(env);
  return [...[...w.byDatabase.values()].filter((s) => s.config.sites.size > 0), ...w.ownServices.values()];
}

/** Throws ConfigError for a bad variable. */
export function services(env: Env): Services {
  let s = cache.get(env);
  if (!s) {
    s = wire(env, loadConfig(env));
    cache.set(env, s);
  }
  return s;
}

/**
 * The crawler ranges' store per KV namespace and the crawler log per D1 database, one each per
 * isolate whatever the number of sites: the ranges' matcher is cached per store (one per isolate,
 * src/crawlers/range-cache.ts), and the recorder keeps pending counts per log (each database's
 * flushed through its own, src/crawlers/recorder.ts).
 */
const rangeStores = new WeakMap<object, KvCrawlerRangeStore>();
const crawlerLogs = new WeakMap<object, D1CrawlerLog>();
function onePer<T>(kept: WeakMap<object, T>, binding: object, make: () => T): T {
  let value = kept.get(binding);
  if (value === undefined) kept.set(binding, (value = make()));
  return value;
}

/** The stores of one database (`env.DB`) for `config.sites`. */
function wire(env: Env, config: Config, servedUnder?: ServedUnder, registeredAt: number | null = null, mirrorOwner = ""): Services {
  let store =
    config.urlSource === "kv"
      ? kvRecordStore(
          binding<KVNamespace>(env, "URLS", "URL_SOURCE=kv reads records from the KV namespace bound as URLS"),
          binding<SiteWriters>(env, "KV_WRITERS", "URL_SOURCE=kv writes each site through the Durable Object bound as KV_WRITERS"),
        )
      : d1RecordStore(binding<D1Database>(env, "DB", "URL_SOURCE=d1 reads records from the D1 database bound as DB"), servedUnder ? { servedUnder } : {});
  const fault = faultAfterRecords(env);
  if (fault !== null) store = faultyRecordStore(store, fault);
  const manifests: ManifestStore =
    config.manifestStore === "kv"
      ? new KvManifestStore(binding<KVNamespace>(env, "URLS", "MANIFEST_STORE=kv keeps manifests in the KV namespace bound as URLS"))
      : new D1ManifestStore(binding<D1Database>(env, "DB", "MANIFEST_STORE=d1 keeps manifests in the D1 database bound as DB"));
  const snapshotKv = (env as unknown as Record<string, unknown>)["SNAPSHOTS"] as KVNamespace | undefined;
  const db = (env as unknown as Record<string, unknown>)["DB"] as D1Database | undefined;
  const writers = (env as unknown as Record<string, unknown>)["KV_WRITERS"] as SiteWriters | undefined;
  const queue = (env as unknown as Record<string, unknown>)["JOBS"] as JobQueue | undefined;
  return {
    config,
    registeredAt,
    store,
    // Saving a manifest also drops the location's cached copy of it (src/manifest/location-cache.ts).
    manifests: new InvalidatingManifestStore(manifests, registeredAt),
    snapshots: snapshotKv ? new KvSnapshotStore(snapshotKv) : null,
    regen: db ? new D1RegenStore(db) : null,
    notify: db ? new D1NotifyStateStore(db) : null,
    // A registered site's mirrors are its own, apart from any other site's naming the same URL (migration 0031).
    mirrors: db ? new D1MirrorStateStore(db, mirrorOwner) : null,
    gsc: db ? new D1GscStatusStore(db) : null,
    robotsLastGood: snapshotKv ? new KvRobotsLastGoodStore(snapshotKv) : null,
    robotsLoop: snapshotKv ? new KvRobotsLoopStore(snapshotKv) : null,
    crawlerRanges: snapshotKv ? onePer(rangeStores, snapshotKv, () => new KvCrawlerRangeStore(snapshotKv)) : null,
    // Sessions and the audit trail: the site's D1 database, or, for a KV site without one, its writer object.
    admin: db ? new D1AdminStateStore(db) : config.urlSource === "kv" && writers ? new KvAdminStateStore(writers) : null,
    partitions: null,
    layouts: null,
    servedAs: null,
    databaseList: null,
    crawlerLog: db ? onePer(crawlerLogs, db, () => new D1CrawlerLog(db)) : null,
    crawlerAnalytics: ((env as unknown as Record<string, unknown>)["CRAWLER_ANALYTICS"] as AnalyticsSink | undefined) ?? null,
    housekeeping: db ? new D1Housekeeping(db) : null,
    jobs: db && queue ? new JobScheduler(new D1JobStateStore(db), queue) : null,
  };
}

/** The site registry (sites as data, docs/tenants.md), in the D1 database bound as `DB`; null without it. */
export function siteRegistry(env: Env): SiteRegistry | null {
  const db = (env as unknown as Record<string, unknown>)["DB"] as D1Database | undefined;
  return db ? new D1SiteRegistry(db) : null;
}

const resolvers = new WeakMap<object, RegistryResolver | null>();

/** The isolate's resolver of registered sites for `env` (src/registry/resolve.ts); null without a registry. */
export function registryResolver(env: Env): RegistryResolver | null {
  let resolver = resolvers.get(env);
  if (resolver === undefined) {
    const registry = siteRegistry(env);
    resolver = registry && new RegistryResolver(registry, loadConfig(env).cache.manifestTtl * 1000);
    resolvers.set(env, resolver);
  }
  return resolver;
}

/** Registered sites' services per env, by origin, rewired when the site's record changes (or, for a site naming hosts, the registered hosts). */
const registeredByEnv = new WeakMap<object, ByteLru<{ updatedAt: number; hostsVersion: number; services: Services }>>();
const NO_HOSTS: ReadonlySet<string> = new Set();
/**
 * Registered sites' services kept wired per isolate, by weight (least recently used dropped; wiring
 * again costs no query): each its settings' bytes (`recordBytes`) and `WIRED_BYTES` for the objects
 * wiring makes, so ~4,600 sites of small settings, ~470 of 16 KB each, never more than the budget.
 */
const REGISTERED_BYTES = 16 * 1024 * 1024;
const WIRED_BYTES = 3_000;

/**
 * A registered site's services: the stores of its database (setting `DATABASE`, default `DB`) for
 * itself alone, its settings over the deployment's variables (src/registry/settings.ts). Throws
 * ConfigError when a setting no longer reads (the site answers 503, the others are unaffected).
 */
export function registeredServices(env: Env, site: RegisteredSite): Services {
  let byOrigin = registeredByEnv.get(env);
  if (!byOrigin) registeredByEnv.set(env, (byOrigin = new ByteLru(REGISTERED_BYTES)));
  // Least recently used first: a hit is the most recent, so the sites in use stay wired, whatever their number.
  const kept = byOrigin.get(site.origin);
  // A site whose settings name hosts is checked against every other site's, the registered ones as this isolate lists
  // them (no query; -1 before the list was first read): it is wired again when they change.
  const hosts = namesHosts(site.settings) ? (registryResolver(env)?.hosts() ?? null) : null;
  const hostsVersion = hosts?.version ?? -1;
  if (kept && kept.updatedAt === site.updatedAt && kept.services.registeredAt === site.createdAt && kept.hostsVersion === hostsVersion) {
    return kept.services;
  }
  const siteEnv = registeredSiteEnv(env, site.origin, site.settings) as unknown as Env;
  // Not loadConfig: the site's settings that name hosts are checked again here (src/registry/settings.ts).
  const s = wire(siteEnv, registeredSiteConfig(env, site.origin, site.settings, hosts?.hosts ?? NO_HOSTS), undefined, site.createdAt, site.origin);
  byOrigin.set(site.origin, { updatedAt: site.updatedAt, hostsVersion, services: s }, recordBytes(site) + WIRED_BYTES);
  return s;
}

/**
 * The services of the site at `origin`: a site the variables configure (SITES), else a live
 * registered one; null for neither. The variables win for the sites they name. Resolving a
 * registered site costs no D1 query once this isolate has the registry's list (src/registry/resolve.ts);
 * `fresh` (a write, a job) reads a stale list again first, so a deleted site takes none. Throws ConfigError.
 */
export async function siteServices(
  env: Env,
  origin: string,
  waitUntil: (p: Promise<unknown>) => void = () => undefined,
  fresh = false,
): Promise<Services | null> {
  if (loadConfig(env).sites.has(origin)) return servicesFor(env, origin);
  const site = await registryResolver(env)?.resolve(origin, Date.now(), waitUntil, fresh);
  return site ? registeredServices(env, site) : null;
}

/**
 * A D1 database binding: its methods (as the metered env finds one: src/jobs/metered-env.ts), and not
 * a service binding, whose RPC stub answers every method name (a Fetcher: it has `fetch`, D1 has not).
 * `fetch` is looked at first: any other name read off a stub (through the metered env's wrapper,
 * which binds what it reads) is a call to the remote worker, refused there.
 */
function isD1(value: unknown): value is D1Database {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  if (typeof v["fetch"] === "function") return false;
  return typeof v["prepare"] === "function" && typeof v["batch"] === "function" && typeof v["exec"] === "function";
}

/**
 * The name of every D1 database the deployment binds, `DB` first, then in name order: what a
 * registered site may have used (its DATABASE setting, then changed) and what is housekept.
 */
export function boundDatabases(env: Env): string[] {
  const raw = env as unknown as Record<string, unknown>;
  return Object.keys(raw)
    .filter((name) => isD1(raw[name]))
    .sort((a, b) => (a === "DB" ? -1 : b === "DB" ? 1 : a < b ? -1 : a > b ? 1 : 0));
}

/** What purges a site's rows from the D1 database bound as `name`; null when none is bound by that name. */
export function databasePurge(env: Env, name: string): SitePurgeStore | null {
  const db = (env as unknown as Record<string, unknown>)[name];
  return isD1(db) ? new D1SitePurge(db) : null;
}

/** Services wired on the D1 database bound as `name` for its housekeeping alone (no site its own); null when none is bound by that name. */
export function databaseSweepServices(env: Env, name: string): Services | null {
  const db = (env as unknown as Record<string, unknown>)[name];
  if (!isD1(db)) return null;
  return wire({ ...env, DB: db } as Env, { ...loadConfig(env), sites: new Set(), shardBase: new Map() });
}

/** The site registry, its sites' services, what purges a deleted one's rows, and every bound database's housekeeping; for the jobs. */
export function registeredSites(env: Env): RegisteredSites | null {
  const registry = siteRegistry(env);
  return (
    registry && {
      registry,
      servicesOf: (site) => registeredServices(env, site),
      listHosts: async () => {
        await registryResolver(env)?.currentHosts(Date.now());
      },
      purgeOf: (site) => {
        // Its database first, then every other the deployment binds: rows it left where its settings no longer point go too.
        const raw = env as unknown as Record<string, unknown>;
        const own = registeredSiteEnv(env, site.origin, site.settings)["DB"];
        const databases = [...new Set([own, ...boundDatabases(env).map((name) => raw[name])])].filter(isD1);
        return databases.length === 0 ? null : purgeEverywhere(databases.map((db) => new D1SitePurge(db)));
      },
      databases: () =>
        boundDatabases(env).flatMap((binding) => {
          const services = databaseSweepServices(env, binding);
          return services ? [{ binding, services }] : [];
        }),
    }
  );
}
