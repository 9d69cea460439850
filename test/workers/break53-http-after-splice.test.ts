/**
 * Issue 53 ("blocks"), tester break53: over HTTP, after splices (a whole middle block deleted, a
 * change in the first and in the last block), a shard served from its snapshot and the same shard
 * rendered live (no SNAPSHOTS binding) answer the same ETag and the same bytes, for `.xml`,
 * `.xml` with gzip accepted, and `.xml.gz`; and serving the snapshot reads one KV value (its head,
 * nothing else of the snapshot namespace) and never serves the block table stored after the gzip
 * in that value: the `.xml.gz` body is exactly the metadata's `gzBytes`.
 */
import { describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import type { SnapshotMeta } from "../../src/snapshots/store.ts";
import { listed, manifestOf, newSite, observedDeps, shardName, write } from "./regen-support.ts";
import { call, gunzip, text } from "./support.ts";

const PAST = Date.UTC(2026, 0, 1);

/** A KV namespace that records the keys read from it. */
function countingKv(kv: KVNamespace, reads: string[]): KVNamespace {
  return new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if ((prop === "get" || prop === "getWithMetadata") && typeof value === "function") {
        return (key: string, ...rest: unknown[]) => {
          reads.push(key);
          return (value as (...a: unknown[]) => unknown).call(target, key, ...rest);
        };
      }
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe("break53: HTTP after splices", () => {
  it("snapshot and live answers agree on ETag and bytes; a snapshot is one KV read", async () => {
    const site = newSite("b53-http", { MAX_URLS_PER_SHARD: "4000" });
    await write(site, demoSection(site.origin, "pages", 4_500), PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);

    // Block 1 deleted whole, a change in block 0 and one in the first shard's last block, one appended.
    // Stamped in the past, so the live render is versioned (nothing changed within the settle window).
    await site.writer.delete(
      demoSection(site.origin, "pages", 1_000, 1_000).map((r) => new URL(r.loc).href),
      PAST + 1_000,
    );
    const [first] = demoSection(site.origin, "pages", 1, 3);
    const [last] = demoSection(site.origin, "pages", 1, 3_990);
    await write(
      site,
      [
        { ...first, lastmod: "2026-08-01" },
        { ...last, lastmod: "2026-08-02" },
      ],
      PAST + 2_000,
    );
    await write(site, demoSection(site.origin, "pages", 7, 4_500), PAST + 3_000);
    const run = await regenerateSite(o.deps, site.origin);
    expect(run.shardsSpliced).toBeGreaterThan(0);

    const liveEnv = { ...site.env, SNAPSHOTS: undefined, EDGE_CACHE_TTL: "0" } as unknown as Env;
    for (const shard of listed(await manifestOf(site))) {
      // The stored value: the gzip, then the block table (metadata `table` bytes).
      const head = await site.env.SNAPSHOTS.getWithMetadata<SnapshotMeta>(shard.snapshot!, "arrayBuffer");
      const meta = head.metadata!;
      expect(meta.table, shardName(shard)).toBeGreaterThan(0);
      expect(head.value!.byteLength, shardName(shard)).toBe(meta.gzBytes + meta.table!);
      for (const [suffix, headers] of [
        [".xml", {}],
        [".xml", { "Accept-Encoding": "gzip" }],
        [".xml.gz", {}],
      ] as const) {
        const path = `/sitemap-${shardName(shard)}${suffix}`;
        const reads: string[] = [];
        const snapEnv = { ...site.env, EDGE_CACHE_TTL: "0", SNAPSHOTS: countingKv(site.env.SNAPSHOTS, reads) } as Env;
        const a = await call(snapEnv, `${site.origin}${path}`, { headers });
        const b = await call(liveEnv, `${site.origin}${path}`, { headers });
        expect(a.headers.get("x-sitemap-source"), path).toBe("snapshot");
        expect(b.headers.get("x-sitemap-source"), path).toBe("live");
        expect(a.headers.get("etag"), path).toBe(b.headers.get("etag"));
        const aBytes = new Uint8Array(await a.arrayBuffer());
        const bBytes = new Uint8Array(await b.arrayBuffer());
        expect(aBytes, path).toEqual(bBytes);
        if (suffix === ".xml.gz") {
          expect(text(await gunzip(aBytes))).toContain("</urlset>");
          // The gzip only: not one byte of the block table after it.
          expect(aBytes.byteLength, path).toBe(meta.gzBytes);
        }
        // One read of the snapshot's head, and no other key of the snapshot namespace.
        expect(reads, path).toEqual([shard.snapshot]);
      }
    }
  });
});
