/**
 * Issue 53 ("blocks"), tester break53: a site over two D1 databases (SITE_DATABASES). Each
 * partition numbers its own keys and the site's view offsets them (and the entries' block starts);
 * after a pass and after changes spliced into each partition's shards, every shard served from its
 * snapshot and the same shard rendered live (no SNAPSHOTS binding) must answer the same ETag and
 * bytes. Found: a shard of partition 1 sent as `.xml` with gzip accepted is live-rendered from row
 * arrays that carry the partition's own keys while its block starts are site keys, so the live
 * gzip is cut in other blocks than the snapshot: other bytes under the same strong ETag.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { databaseServices } from "../../src/services.ts";
import { regenerateAll } from "./support/regenerate-all.ts";
import { call, freshOrigin, locsOf } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef", "Content-Type": "application/json" };

beforeAll(async () => {
  await applyD1Migrations(baseEnv.PART_B, baseEnv.TEST_MIGRATIONS);
});

afterEach(() => vi.restoreAllMocks());

const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

/** Every shard the index lists, fetched from its snapshot and live: [url, what differed][] (empty: all agree). */
async function disagreements(env: Env): Promise<{ urls: number; differ: string[] }> {
  const origin = env.SITES;
  const index = await (await call(env, `${origin}/sitemap.xml`)).text();
  const liveEnv = { ...env, SNAPSHOTS: undefined } as unknown as Env;
  const differ: string[] = [];
  let urls = 0;
  for (const url of locsOf(index)) {
    for (const [suffix, headers] of [
      ["", {}],
      ["", { "Accept-Encoding": "gzip" }],
      [".gz", {}],
    ] as const) {
      const what = `${url.replace(origin, "")}${suffix} ${JSON.stringify(headers)}`;
      const a = await call(env, `${url}${suffix}`, { headers });
      const b = await call(liveEnv, `${url}${suffix}`, { headers });
      expect([a.headers.get("x-sitemap-source"), b.headers.get("x-sitemap-source")], what).toEqual(["snapshot", "live"]);
      const aBytes = new Uint8Array(await a.arrayBuffer());
      const bBytes = new Uint8Array(await b.arrayBuffer());
      // The same strong ETag must name the same bytes.
      expect(a.headers.get("etag"), what).toMatch(/^"/);
      expect(a.headers.get("etag"), what).toBe(b.headers.get("etag"));
      if (aBytes.byteLength !== bBytes.byteLength || aBytes.some((x, i) => x !== bBytes[i]))
        differ.push(`${what}: snapshot ${aBytes.byteLength} bytes, live ${bBytes.byteLength} bytes`);
      if (suffix === "" && !("Accept-Encoding" in headers)) urls += locsOf(new TextDecoder().decode(aBytes)).length;
    }
  }
  return { urls, differ };
}

describe("break53: a partitioned site's spliced shards", () => {
  it("serve the same ETag and bytes from the snapshot and live", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("b53-parts");
    // No settle window: a live render is versioned as soon as the run after the writes is built.
    const env = { ...baseEnv, SITES: origin, SITE_DATABASES: `${origin}=DB,PART_B`, REGEN_SETTLE_SECONDS: "0", EDGE_CACHE_TTL: "0" } as Env;
    const send = async (method: string, body: unknown[]) => {
      const res = await call(env, `${origin}/sitemap-admin/urls`, { method, headers: AUTH, body: JSON.stringify(body) });
      expect(res.status, await res.text()).toBe(200);
    };
    const records = demoSection(origin, "pages", 2_400);
    await send("PUT", records);
    await pause();
    await regenerateAll(databaseServices(env));
    await pause();
    // After a pass: every shard's snapshot is its live render.
    expect.soft(await disagreements(env)).toEqual({ urls: 2_400, differ: [] });

    // Changes in many blocks of both partitions: updates, a run of deletions, appends.
    await send(
      "PUT",
      [7, 900, 1_800, 2_399].map((i) => ({ ...records[i], lastmod: "2026-10-10" })),
    );
    await send(
      "DELETE",
      records.slice(1_000, 1_500).map((r) => ({ loc: r.loc })),
    );
    await send("PUT", demoSection(origin, "pages", 40, 2_400));
    await pause();
    const summaries = await regenerateAll(databaseServices(env));
    expect(summaries.reduce((n, s) => n + s.shardsSpliced, 0)).toBeGreaterThan(0);
    await pause();

    expect.soft(await disagreements(env)).toEqual({ urls: 2_400 - 500 + 40, differ: [] });
  });
});
