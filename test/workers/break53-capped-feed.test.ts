/**
 * Issue 53 ("blocks"), tester break53: a run that stops reading the change feed at its bound
 * (REGEN_MAX_ROWS; the feed is read 5,000 changes a page) while a shard has more changes past
 * that point. Before blocks, the shard was re-planned from all its rows; a splice re-renders only
 * the blocks of the changes it read and keeps the others' stored figures. The claim: the result
 * equals a full rebuild byte for byte (so the live render of the published entry, under the same
 * strong ETag, sends the snapshot's bytes) and what a full pass plans.
 */
import { describe, expect, it } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import { regenerateSite } from "../../src/regen/regenerate.ts";
import { listed, manifestOf, newSite, observedDeps, shardName, write } from "./regen-support.ts";
import { call } from "./support.ts";

const PAST = Date.UTC(2026, 0, 1);

describe("break53: a change feed read up to the run's bound", () => {
  it("the spliced shard is its live render under its ETag, and what a full pass plans", async () => {
    const site = newSite("b53-capped", { MAX_URLS_PER_SHARD: "10000", REGEN_MAX_ROWS: "1", EDGE_CACHE_TTL: "0" });
    const records = demoSection(site.origin, "pages", 10_000);
    await write(site, records, PAST);
    const o = observedDeps(site);
    await regenerateSite(o.deps, site.origin);
    const [before] = listed(await manifestOf(site));
    expect(before!.pageStarts).toHaveLength(10);

    // 5,000 changes in blocks 0–4 (one feed page), then one in block 9, all settled long ago.
    await write(
      site,
      records.slice(0, 5_000).map((r) => ({ ...r, lastmod: "2026-02-02" })),
      PAST + 1_000,
    );
    await write(site, [{ ...records[9_500]!, lastmod: "2026-03-03" }], PAST + 2_000);
    const run = await regenerateSite(o.deps, site.origin);
    // Fixed: a run that did not read the feed to its head trusts no stored block: the shard is re-planned whole.
    expect(run.shardsSpliced).toBe(0);
    const [after] = listed(await manifestOf(site));

    const path = `${site.origin}/sitemap-${shardName(after!)}.xml`;
    const liveEnv = { ...site.env, SNAPSHOTS: undefined } as unknown as Env;
    const headers = { "Accept-Encoding": "gzip" };
    const a = await call(site.env, path, { headers });
    const b = await call(liveEnv, path, { headers });
    expect([a.headers.get("x-sitemap-source"), b.headers.get("x-sitemap-source")]).toEqual(["snapshot", "live"]);
    const etags = [a.headers.get("etag"), b.headers.get("etag")];
    const snapshotXml = await (await call(site.env, path)).text();
    const liveXml = await (await call(liveEnv, path)).text();
    // One strong ETag, one body.
    expect(etags[0]).toMatch(/^"/);
    expect.soft(etags[0]).toBe(etags[1]);
    expect
      .soft({ sameBody: snapshotXml === liveXml, march3InSnapshot: snapshotXml.includes("2026-03-03"), march3Live: liveXml.includes("2026-03-03") })
      .toEqual({ sameBody: true, march3InSnapshot: true, march3Live: true });

    // A full pass over the same rows plans another version: the splice's entry was not what a pass plans.
    const full = await regenerateSite(o.deps, site.origin, { full: true });
    expect.soft(full.shardsRendered, `full pass re-rendered ${full.changed.join(", ")}`).toBe(0);
  });
});
