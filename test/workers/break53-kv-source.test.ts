/**
 * Issue 53 ("blocks"), tester break53: a KV record source (URL_SOURCE=kv, MANIFEST_STORE=kv),
 * whose regeneration walks the site instead of splicing. Shards of several blocks: after the first
 * run and after a change, deletions of a whole block and appends, each shard served from its
 * snapshot and rendered live (no SNAPSHOTS binding) answers the same ETag and the same bytes, for
 * `.xml`, `.xml` with gzip accepted and `.xml.gz`.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { D1RegenStore } from "../../src/adapters/d1/regen-store.ts";
import { KvSnapshotStore } from "../../src/adapters/kv/snapshot-store.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { listedShards } from "../../src/manifest/manifest.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { services } from "../../src/services.ts";
import { kvFixture } from "./fixtures/kv.ts";
import { call, freshOrigin, validRecords } from "./support.ts";

const T0 = Date.UTC(2026, 0, 1);

async function disagreements(e: Env, origin: string): Promise<string[]> {
  const manifest = await services(e).manifests.load(origin);
  const liveEnv = { ...e, SNAPSHOTS: undefined } as unknown as Env;
  const differ: string[] = [];
  for (const shard of listedShards(manifest!)) {
    for (const [suffix, headers] of [
      [".xml", {}],
      [".xml", { "Accept-Encoding": "gzip" }],
      [".xml.gz", {}],
    ] as const) {
      const path = `/sitemap-${shard.section}-${shard.n}${suffix}`;
      const what = `${path} ${JSON.stringify(headers)}`;
      const a = await call(e, origin + path, { headers });
      const b = await call(liveEnv, origin + path, { headers });
      expect([a.headers.get("x-sitemap-source"), b.headers.get("x-sitemap-source")], what).toEqual(["snapshot", "live"]);
      expect(a.headers.get("etag"), what).toMatch(/^"/);
      expect(a.headers.get("etag"), what).toBe(b.headers.get("etag"));
      const aBytes = new Uint8Array(await a.arrayBuffer());
      const bBytes = new Uint8Array(await b.arrayBuffer());
      if (aBytes.byteLength !== bBytes.byteLength || aBytes.some((x, i) => x !== bBytes[i]))
        differ.push(`${what}: snapshot ${aBytes.byteLength} bytes, live ${bBytes.byteLength} bytes`);
    }
  }
  return differ;
}

describe("break53: KV record source, shards of several blocks", () => {
  it("snapshot and live answers agree after each run", async () => {
    const origin = freshOrigin("b53-kv");
    const e = kvFixture.env({ SITES: origin, MAX_URLS_PER_SHARD: "2000", EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" });
    const s = services(e);
    const deps = {
      config: s.config,
      store: s.store,
      manifests: s.manifests,
      snapshots: new KvSnapshotStore(env.SNAPSHOTS),
      state: new D1RegenStore(env.DB),
    };
    await kvFixture.upsert(e, validRecords(e, demoSection(origin, "pages", 3_500)), T0);
    expect((await regenerateSite(deps, origin)).failed).toEqual([]);
    expect(await disagreements(e, origin)).toEqual([]);

    const [one] = demoSection(origin, "pages", 1, 500);
    await kvFixture.upsert(e, validRecords(e, [{ ...one, lastmod: "2026-02-02" }]), T0 + 1_000);
    await kvFixture.delete(
      e,
      validRecords(e, demoSection(origin, "pages", 1_000, 1_000)).map((r) => r.loc),
      T0 + 2_000,
    );
    await kvFixture.upsert(e, validRecords(e, demoSection(origin, "pages", 700, 3_500)), T0 + 3_000);
    expect((await regenerateSite(deps, origin)).failed).toEqual([]);
    expect(await disagreements(e, origin)).toEqual([]);
  });
});
