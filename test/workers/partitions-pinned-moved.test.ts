/**
 * A crawl that read the index before a move's flip, its links followed after it, when a shard's
 * every URL moved to the new database (issue 49, defect 6): the old link still answers 200 with the
 * rows it listed, and the old index's links together list every URL exactly once — generated over
 * sections of one to small URLs, each URL moving or staying as its home says.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { partitionOf } from "../../src/partitions/home.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { databaseServices, servicesFor } from "../../src/services.ts";
import { regenerateAll } from "./support/regenerate-all.ts";
import { call, document, freshOrigin, locsOf, validRecords } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef", "Content-Type": "application/json" };

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

const envOf = (origin: string, databases: string): Env =>
  ({ ...baseEnv, SITES: origin, SITE_DATABASES: `${origin}=${databases}`, MAX_URLS_PER_SHARD: "40", INDEXNOW_ENDPOINT: "", PING_URLS: "" }) as Env;

const shardLinks = async (env: Env, origin: string): Promise<string[]> =>
  locsOf(await document(env, `${origin}/sitemap.xml`)).filter((u) => /-\d+\.xml(\?|$)/.test(u));

/** Every link's locs; each link must answer 200. */
async function crawl(env: Env, links: readonly string[]): Promise<string[]> {
  const locs: string[] = [];
  for (const url of links) {
    const res = await call(env, url);
    expect(res.status, url).toBe(200);
    locs.push(...locsOf(await res.text()));
  }
  return locs;
}

/** `count` paths of `section` whose home under `to` partitions is the new database (moving) or not. */
function pathsOf(origin: string, section: string, count: number, moving: boolean, to: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) {
    const path = `/${section}/${i}`;
    if ((partitionOf(origin + path, to) === to - 1) === moving) out.push(path);
  }
  return out;
}

const BINDINGS = ["DB", "PART_B", "PART_C", "PART_D"];
const sectionsOf = fc.array(fc.record({ size: fc.integer({ min: 1, max: 3 }), moved: fc.integer({ min: 0, max: 3 }) }), { minLength: 1, maxLength: 4 });

describe("an index read before a flip, crawled after it", () => {
  it("answers 200 for every link and lists every URL once, a shard whose every URL moved included", async () => {
    await fc.assert(
      // From one database (links without a count) or from three (links with one), grown by one.
      fc.asyncProperty(fc.constantFrom(1, 3), sectionsOf, async (from, sections) => {
        const origin = freshOrigin("pin-moved");
        const before = envOf(origin, BINDINGS.slice(0, from).join(","));
        const few = sections.flatMap(({ size, moved }, i) => {
          const m = Math.min(moved, size);
          const paths = [...pathsOf(origin, `s${i}`, m, true, from + 1), ...pathsOf(origin, `s${i}`, size - m, false, from + 1)];
          return paths.map((p) => ({ loc: origin + p, section: `s${i}` }));
        });
        const inputs = [...demoSection(origin, "products", 60), ...few];
        expect((await call(before, `${origin}/sitemap-admin/urls`, { method: "PUT", headers: AUTH, body: JSON.stringify(inputs) })).status).toBe(200);
        await regenerateAll(databaseServices(before));
        const live = validRecords(before, inputs).map((r) => r.loc);
        const grown = envOf(origin, BINDINGS.slice(0, from + 1).join(","));
        // A site listed over one database more is partitioned (under one partition until its flip).
        if (from === 1) await regenerateAll(databaseServices(grown));
        const links = await shardLinks(grown, origin);
        const site = servicesFor(grown, origin);
        for (let step = 0; ; step++) {
          if ((await rebalanceStep(site, origin, { maxRows: 200 })).state === "flipped") break;
          expect(step).toBeLessThan(10);
        }
        // Right after the flip, and once the partitions have regenerated (the emptied shards then count 0 URLs).
        for (const when of ["flipped", "regenerated"]) {
          if (when === "regenerated") await regenerateAll(databaseServices(grown));
          const crawled = await crawl(grown, links);
          expect(crawled.length, when).toBe(live.length);
          expect(new Set(crawled), when).toEqual(new Set(live));
        }
      }),
      {
        numRuns: 6,
        seed: 49,
        examples: [
          [1, [{ size: 1, moved: 1 }]],
          [3, [{ size: 1, moved: 1 }]],
        ],
      },
    );
  });
});
