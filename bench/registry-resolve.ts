/**
 * The host resolver at 20,000 registered sites (issue 50 item 7, src/registry/resolve.ts), in Node
 * (`npm run bench -- --only registry-resolve`): the registry is an in-memory SiteRegistry counting
 * its reads, its sites as the platform API stores them (settings of a few variables, a token hash).
 * Measured: the registry reads for 20,000 known hosts (each twice, random order) and 2,000 unknown
 * ones; the time of one resolution, known and unknown, once the list is held; the time to build the
 * list from 20,000 rows; and the heap it holds. The D1 read of the list itself (one query a
 * MANIFEST_CACHE_TTL per isolate) is measured in workerd by the tenants bench (`SiteRegistry.live()`).
 */
import { RegistryResolver } from "../src/registry/resolve.ts";
import type { RegisteredSite, SiteRegistry } from "../src/registry/store.ts";
import { type BenchOptions, type Section, forceGc, int, mib, ms, now } from "./lib.ts";

const SITES = 20_000;
const µs = (v: number): string => `${(v * 1000).toFixed(1)} µs`;
const UNKNOWN = 2_000;

function sites(n: number): RegisteredSite[] {
  const at = Date.UTC(2026, 10, 1);
  return Array.from({ length: n }, (_, i) => ({
    origin: `https://tenant-${i}.shops.example`,
    settings: { DEFAULT_SECTION: "pages", MAX_URLS_PER_SHARD: "10000", ROBOTS_ORIGIN_URL: "{origin}/robots.txt", GSC_PROPERTY: "{origin}/" },
    tokenHash: i.toString(16).padStart(64, "0"),
    createdAt: at,
    updatedAt: at + i,
    deletedAt: null,
  }));
}

/** The registry's reads counted: what a request would cost in D1 queries. */
function countingRegistry(rows: RegisteredSite[]): { registry: SiteRegistry; reads: () => number } {
  let reads = 0;
  const read = <T>(value: T): Promise<T> => {
    reads++;
    return Promise.resolve(value);
  };
  const registry: SiteRegistry = {
    live: () => read(rows.map((s) => ({ origin: s.origin, updatedAt: s.updatedAt }))),
    // Fresh strings and objects, as D1's rows and the registry's JSON.parse of settings give them.
    liveSites: () => read(JSON.parse(JSON.stringify(rows)) as RegisteredSite[]),
    get: (origin) => read(rows.find((s) => s.origin === origin) ?? null),
    byTokenHash: () => read(null),
    create: () => read(false),
    atHost: () => read(null),
    update: () => read(null),
    rotateToken: () => read(false),
    markDeleted: () => read(false),
    page: () => read([]),
    deleting: () => read([]),
    remove: () => read(undefined),
  };
  return { registry, reads: () => reads };
}

export async function registryResolveBench(_options: BenchOptions): Promise<Section> {
  const rows = sites(SITES);
  const { registry, reads } = countingRegistry(rows);
  const ignore = () => undefined;
  forceGc();
  const heapBefore = process.memoryUsage().heapUsed;
  const resolver = new RegistryResolver(registry, 60_000);
  const t = Date.now();
  const loadStart = now();
  await resolver.resolve(rows[0]!.origin, t, ignore);
  const loadMs = now() - loadStart;
  forceGc();
  const heap = process.memoryUsage().heapUsed - heapBefore;

  const order = rows.map((s) => s.origin).sort(() => Math.random() - 0.5);
  const known: number[] = [];
  for (const origin of [...order, ...order]) {
    const start = now();
    const site = await resolver.resolve(origin, t, ignore);
    known.push(now() - start);
    if (site?.origin !== origin) throw new Error(`resolved ${origin} wrong`);
  }
  const unknown: number[] = [];
  for (let i = 0; i < UNKNOWN; i++) {
    const start = now();
    if ((await resolver.resolve(`https://random-${i}-${Math.random().toString(36).slice(2)}.example`, t, ignore)) !== null)
      throw new Error("an unknown host resolved");
    unknown.push(now() - start);
  }
  const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  return {
    title: `Host resolution at ${int(SITES)} registered sites`,
    note: `${int(SITES * 2)} resolutions of known hosts (every site twice, random order) and ${int(UNKNOWN)} of unknown hosts, on one isolate's list; registry reads counted at the port.`,
    rows: [
      {
        name: "registry reads (D1 queries) for all of them",
        value: int(reads()),
        detail: "the list, read once per MANIFEST_CACHE_TTL",
        target: "1",
        met: reads() === 1,
      },
      { name: "known host, mean", value: µs(mean(known)), detail: "a map lookup" },
      { name: "unknown host, mean", value: µs(mean(unknown)), detail: "a map lookup" },
      {
        name: "reading and building the list",
        value: ms(loadMs),
        detail: `${int(SITES)} records (settings, token hashes) copied through JSON as D1 gives them, then mapped`,
      },
      {
        name: "heap held by the list",
        value: mib(heap),
        detail: `${int(heap / SITES)} bytes a site`,
        target: "≤ 32 MiB (a quarter of the isolate's 128 MB)",
        met: heap <= 32 * 1048576,
      },
    ],
  };
}
