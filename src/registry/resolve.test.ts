/**
 * What the isolate's resolver holds (src/registry/resolve.ts), measured on V8's heap: at 20,000
 * registered sites of 16 KB of settings each, every one of them requested, it stays bounded (the
 * whole records were ~320 MB, over the isolate's 128 MB), and sites of small settings still cost no
 * registry read per request.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { LISTED_SETTINGS_BYTES, RECORDS_BYTES, RegistryResolver } from "./resolve.ts";
import type { ListedSite, RegisteredSite, SiteRegistry } from "./store.ts";

const gc: () => void = (() => {
  if (typeof globalThis.gc === "function") return globalThis.gc as () => void;
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
})();

const SITES = 20_000;
const origin = (i: number) => `https://tenant-${String(i).padStart(5, "0")}.shops.example`;

/** `bytes` of settings for site `i` (its mirror URLs), made afresh at each read as D1's rows are. */
function settingsOf(i: number, bytes: number): Record<string, string> {
  const url = `${origin(i)}/cms/sitemap.xml `;
  return {
    DEFAULT_SECTION: "pages",
    MIRROR_SITEMAPS: url
      .repeat(Math.ceil(bytes / url.length))
      .slice(0, bytes)
      .trim(),
  };
}

/** The registry as its D1 adapter answers (settings listed only when small); each read counted, no record held. */
function registry(settingsBytes: number, updatedAt: (i: number) => number = () => 1) {
  const reads = { list: 0, get: 0 };
  const listed = (i: number): ListedSite => ({
    origin: origin(i),
    settings: null,
    tokenHash: i.toString(16).padStart(64, "0"),
    createdAt: 1,
    updatedAt: updatedAt(i),
    deletedAt: null,
  });
  const site = (i: number): RegisteredSite => ({ ...listed(i), settings: settingsOf(i, settingsBytes) });
  const store: Pick<SiteRegistry, "liveSites" | "get"> = {
    liveSites: async (limit) => {
      reads.list++;
      const out: ListedSite[] = [];
      // As the adapter's SQL: settings over the limit never leave the database (nor are they made here).
      for (let i = 0; i < SITES; i++) out.push(settingsBytes <= limit ? site(i) : listed(i));
      return out;
    },
    get: async (o) => {
      reads.get++;
      const i = Number(/tenant-(\d+)/.exec(o)?.[1] ?? -1);
      return i >= 0 && i < SITES ? site(i) : null;
    },
  };
  return { registry: store as SiteRegistry, reads };
}

const ignore = () => undefined;

describe("the resolver's memory", () => {
  it("at 20,000 sites of 16 KB of settings, every one requested: under 20 MiB held, each site's settings read once", async () => {
    const { registry: r, reads } = registry(16 * 1024);
    gc();
    const before = process.memoryUsage().heapUsed;
    const resolver = new RegistryResolver(r, 60_000);
    for (let i = 0; i < SITES; i++) {
      const site = await resolver.resolve(origin(i), 0, ignore);
      expect(site?.settings["MIRROR_SITEMAPS"]?.length).toBeGreaterThan(16_000);
      expect(site?.origin).toBe(origin(i));
    }
    gc();
    const held = process.memoryUsage().heapUsed - before;
    console.warn(
      `resolver at ${SITES} sites × 16 KB: ${(held / 1024 / 1024).toFixed(1)} MiB held, ${(resolver.recordBytes / 1024 / 1024).toFixed(1)} MiB of records (estimated)`,
    );
    expect(held).toBeLessThan(20 * 1024 * 1024);
    expect(resolver.recordBytes).toBeLessThanOrEqual(RECORDS_BYTES);
    expect(reads).toEqual({ list: 1, get: SITES });
    // The most recently used are kept: requested again, no read.
    for (let i = SITES - 100; i < SITES; i++) await resolver.resolve(origin(i), 1_000, ignore);
    expect(reads.get).toBe(SITES);
    // Unknown hosts cost nothing but the lookup.
    for (let i = 0; i < 1_000; i++) expect(await resolver.resolve(`https://random-${i}.example`, 2_000, ignore)).toBeNull();
    expect(reads).toEqual({ list: 1, get: SITES });
  }, 60_000);

  it("sites of small settings are listed whole: no registry read per request, whatever their number", async () => {
    const { registry: r, reads } = registry(200);
    const resolver = new RegistryResolver(r, 60_000);
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < SITES; i += 7) expect((await resolver.resolve(origin(i), 0, ignore))?.settings["DEFAULT_SECTION"]).toBe("pages");
    expect(reads).toEqual({ list: 1, get: 0 });
    expect(resolver.recordBytes).toBe(0);
    expect(LISTED_SETTINGS_BYTES).toBeGreaterThanOrEqual(200);
  });

  it("a large site's record is read again when the list shows it changed, and concurrent first requests share one read", async () => {
    let version = 1;
    const { registry: r, reads } = registry(4_096, () => version);
    const resolver = new RegistryResolver(r, 60_000);
    await Promise.all(Array.from({ length: 20 }, () => resolver.resolve(origin(3), 0, ignore)));
    expect(reads).toEqual({ list: 1, get: 1 });
    version = 2;
    // Past the TTL a listed site is answered while the list is read again in the background.
    const background: Promise<unknown>[] = [];
    expect((await resolver.resolve(origin(3), 61_000, (p) => background.push(p)))?.updatedAt).toBe(1);
    await Promise.all(background);
    expect((await resolver.resolve(origin(3), 61_001, ignore))?.updatedAt).toBe(2);
    expect(reads).toEqual({ list: 2, get: 2 });
  });
});
