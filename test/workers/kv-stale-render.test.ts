/**
 * An ETag names its bytes over KV (issue 34): the manifest's version comes from the writer object's
 * SQLite (the cron plans from it), while a live render reads KV blocks, which other locations see
 * up to 60 s late (support/eventual-kv.ts). A render whose blocks are not yet that version is never
 * a complete body under the version's ETag and never reaches the edge cache: a `503` with
 * Retry-After when that shows before the first byte, a broken transfer after. Snapshots are in KV
 * too (SNAPSHOTS through the same wrapper): right after the cron, this location does not see the
 * new one yet and renders live, as a remote location does. Manifests in D1: the new version is
 * seen at once. The other way round, rows that moved past the version (a write after the cron) go
 * out as on D1: without validators, `no-store`, whatever KV holds (the writer object says so before
 * the first byte).
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { PROPAGATION_MS, eventualKv } from "./support/eventual-kv.ts";
import { settled } from "./support/kv-objects.ts";
import { batch, call, cron, eventualSite, putUntilStored } from "./support/kv-site.ts";

let restores: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const restore of restores) await restore();
  restores = [];
});

/** A KV site with `size` records, projected, pre-rendered and settled everywhere; one shard. */
async function settledSite(label: string, size: number) {
  const snapshots = eventualKv(env.SNAPSHOTS);
  // No settle window: a change committed before the cron is the new version's, not "rows moved past it".
  const site = await eventualSite(label, restores, { MANIFEST_STORE: "d1", SNAPSHOTS: snapshots.kv, EDGE_CACHE_TTL: "3600", REGEN_SETTLE_SECONDS: "0" });
  const advance = (ms: number) => {
    site.kv.advance(ms);
    snapshots.advance(ms);
  };
  await putUntilStored(site.e, site.origin, batch(site.origin, 0, size));
  await settled(site.origin);
  await cron(site.e);
  advance(PROPAGATION_MS + 1_000);
  return { ...site, advance };
}

/** A record rewritten through the admin API, projected (this location's KV has it), then the cron: a new version, not yet seen elsewhere. */
async function changeAndPublish(site: Awaited<ReturnType<typeof settledSite>>, i: number): Promise<void> {
  await putUntilStored(site.e, site.origin, [{ loc: `${site.origin}/b0/r${i}`, lastmod: "2026-11-05" }]);
  await settled(site.origin);
  await cron(site.e);
}

const get = (e: Env, url: string, encoding: "identity" | "gzip", extra: Record<string, string> = {}) =>
  call(e, url, { headers: { "Accept-Encoding": encoding, ...extra } });

describe("a live render whose KV blocks are older than the version it is served under", () => {
  it("is a 503 with Retry-After when that shows before the first byte: no ETag, nothing cached, and the new bytes once KV has them", async () => {
    const site = await settledSite("stale-small", 20);
    const url = `${site.origin}/sitemap-pages-1.xml`;
    const before = await get(site.e, url, "identity");
    expect(before.status).toBe(200);
    const oldTag = before.headers.get("etag");
    expect(await before.text()).not.toContain("2026-11-05");

    await changeAndPublish(site, 3);
    for (const encoding of ["identity", "gzip"] as const) {
      const stale = await get(site.e, url, encoding);
      expect(stale.status, encoding).toBe(503);
      expect(stale.headers.get("retry-after")).not.toBeNull();
      expect(stale.headers.get("cache-control")).toBe("no-store");
      expect(stale.headers.get("etag")).toBeNull();
      await stale.arrayBuffer();
    }
    // A crawler holding the old ETag is not told "not modified" either: it keeps its copy and retries.
    expect((await get(site.e, url, "identity", { "If-None-Match": oldTag! })).status).toBe(503);
    // The text form of the shard, always rendered live, follows the same rule.
    expect((await get(site.e, `${site.origin}/sitemap-pages-1.txt`, "identity")).status).toBe(503);

    // Once KV has the new blocks (and the snapshot) here: the new version, never a cached stale copy.
    site.advance(PROPAGATION_MS + 1_000);
    for (const encoding of ["identity", "gzip"] as const) {
      const fresh = await get(site.e, url, encoding);
      expect(fresh.status).toBe(200);
      expect(fresh.headers.get("x-sitemap-source"), encoding).not.toBe("cache");
      expect(fresh.headers.get("etag")).not.toBe(oldTag);
      await fresh.arrayBuffer();
    }
    const text = await (await get(site.e, url, "identity")).text();
    expect(text).toContain(`<loc>${site.origin}/b0/r3</loc><lastmod>2026-11-05</lastmod>`);
  });

  it("breaks off before its end when that shows after the first byte, under the version's ETag: never a complete body, never cached", async () => {
    // 1,500 records: the first chunk goes out before the render reaches the changed record, in block 1.
    const site = await settledSite("stale-big", 1_500);
    const url = `${site.origin}/sitemap-pages-1.xml`;
    await changeAndPublish(site, 1_400);

    for (const encoding of ["identity", "gzip"] as const) {
      const stale = await get(site.e, url, encoding);
      expect(stale.status, encoding).toBe(200);
      const newTag = stale.headers.get("etag");
      expect(newTag).toMatch(/^"/);
      // The body never completes: a client has no copy to keep under this ETag, nor to revalidate with it.
      await expect(stale.arrayBuffer(), encoding).rejects.toThrow(/not its version/);
    }
    const text = await get(site.e, `${site.origin}/sitemap-pages-1.txt`, "identity");
    expect(text.status).toBe(200);
    await expect(text.text()).rejects.toThrow(/not its version/);

    site.advance(PROPAGATION_MS + 1_000);
    for (const encoding of ["identity", "gzip"] as const) {
      const fresh = await get(site.e, url, encoding);
      expect(fresh.status).toBe(200);
      // Nothing was stored under the version's key: this comes from the snapshot, not from the edge cache.
      expect(fresh.headers.get("x-sitemap-source"), encoding).toBe("snapshot");
      await fresh.arrayBuffer();
    }
    const text2 = await (await get(site.e, url, "identity")).text();
    expect(text2).toContain(`<loc>${site.origin}/b0/r1400</loc><lastmod>2026-11-05</lastmod>`);
  });

  it("rows that moved past the version (a write after the cron) go out without validators, no-store, never cached: as on D1", async () => {
    const site = await settledSite("moved-on", 20);
    // A write after the cron, projected, and seen here: the manifest still names the version before it.
    await putUntilStored(site.e, site.origin, [{ loc: `${site.origin}/b0/r5`, lastmod: "2026-11-07" }]);
    await settled(site.origin);
    site.kv.advance(PROPAGATION_MS + 1_000);
    // The text form is always rendered live: the writer object says the rows moved on, so no validators.
    const url = `${site.origin}/sitemap-pages-1.txt`;
    for (let i = 0; i < 2; i++) {
      const moved = await get(site.e, url, "identity");
      expect(moved.status).toBe(200);
      expect(moved.headers.get("x-sitemap-source")).toBe("live");
      expect(moved.headers.get("etag")).toBeNull();
      expect(moved.headers.get("last-modified")).toBeNull();
      expect(moved.headers.get("cache-control")).toBe("no-store");
      expect((await moved.text()).split("\n")).toContain(`${site.origin}/b0/r5`);
    }
    // The XML is the version's snapshot, with its ETag: those bytes, until the next cron.
    const xml = await get(site.e, `${site.origin}/sitemap-pages-1.xml`, "identity");
    expect(xml.headers.get("x-sitemap-source")).toMatch(/^(snapshot|cache)$/);
    expect(await xml.text()).not.toContain("2026-11-07");
  });
});
