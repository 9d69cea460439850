/**
 * A shard rendered from D1's row arrays (`rowPages`: `.raw()` rows of the rendering columns, pages
 * sized by bytes) gives the same bytes as rendered from records (`recordPages`, objects of every
 * column): generated records with every feature (escapes, non-ASCII, each lastmod form,
 * changefreq, priority, each extension), every render option, pages that split anywhere.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { D1RecordReader } from "../../src/adapters/d1/reader.ts";
import { FIRST_PAGE_ROWS, nextPageRows } from "../../src/adapters/d1/row-pages.ts";
import { D1RecordWriter } from "../../src/adapters/d1/writer.ts";
import { extKindsOf } from "../../src/core/extensions/kinds.ts";
import { renderUrlRows, renderUrlset } from "../../src/core/render.ts";
import { paged } from "../../src/core/source.ts";
import type { UrlRow } from "../../src/core/types.ts";
import { CHANGEFREQS } from "../../src/core/types.ts";
import { SHARD_EXTENSIONS } from "../../src/core/writers.ts";
import { demoSection, demoVideo, withDemoExtensions } from "../../src/demo/demo-data.ts";
import { freshOrigin, validRecords } from "./support.ts";

const bytes = async (stream: ReadableStream<Uint8Array>): Promise<Uint8Array> => new Uint8Array(await new Response(stream).arrayBuffer());

const PATH = fc.stringMatching(/^[a-z0-9&'"<>éü日本 %-]{0,24}$/);
const LASTMOD = fc.constantFrom(undefined, "2026-01-02", "2026-03-04T05:06:07Z", "2026-03-04T05:06:07.891+02:00");
const EXT = fc.constantFrom("none", "image", "video", "alternates", "news", "all");

/** One generated record's input, in the admin API's raw form. */
const INPUT = fc.record({
  path: PATH,
  lastmod: LASTMOD,
  changefreq: fc.constantFrom(undefined, ...CHANGEFREQS),
  priority: fc.option(fc.integer({ min: 0, max: 100 })),
  ext: EXT,
});

type Generated = { path: string; lastmod: string | undefined; changefreq: string | undefined; priority: number | null; ext: string };

function recordInput(origin: string, g: Generated, i: number): Record<string, unknown> {
  const loc = `${origin}/${encodeURIComponent(g.path)}/${i}?q=${encodeURIComponent(g.path)}&n=${i}`;
  const out: Record<string, unknown> = { loc, section: "rows" };
  if (g.lastmod) out["lastmod"] = g.lastmod;
  if (g.changefreq) out["changefreq"] = g.changefreq;
  if (g.priority !== null) out["priority"] = g.priority / 100;
  const all = g.ext === "all";
  if (all || g.ext === "image")
    out["images"] = [`${origin}/img/${i}.jpg`, { loc: `${origin}/img/${i}-b.jpg`, caption: `"${g.path}" & <more>`, title: g.path }];
  if (all || g.ext === "video") out["videos"] = [demoVideo(i)];
  if (all || g.ext === "alternates")
    out["alternates"] = [
      { hreflang: "en", href: loc },
      { hreflang: "x-default", href: `${origin}/x/${i}` },
    ];
  if (all || g.ext === "news")
    out["news"] = { publication: { name: "The Demo Times", language: "en" }, publication_date: "2026-03-04T05:06:07Z", title: g.path || "t" };
  return out;
}

describe("a shard rendered from row arrays", () => {
  it("equals the render from records byte for byte: generated records, every option, any page split", async () => {
    const writer = new D1RecordWriter(env.DB);
    await fc.assert(
      fc.asyncProperty(
        fc.array(INPUT, { minLength: 1, maxLength: 40 }),
        fc.option(fc.integer({ min: 1, max: 9 })),
        fc.record({ lastmodDateOnly: fc.boolean(), stylesheet: fc.boolean(), declare: fc.boolean() }),
        async (generated, pageRows, opts) => {
          const origin = freshOrigin("rows");
          const records = validRecords(
            { ...env, SITES: origin } as Env,
            generated.map((g, i) => recordInput(origin, g, i)),
          );
          await writer.upsert(records);
          const keys = await env.DB.prepare("SELECT min(id) AS lo, max(id) AS hi FROM urls WHERE origin = ?1")
            .bind(origin)
            .first<{ lo: number; hi: number }>();
          const range = { origin, section: "rows", firstKey: keys!.lo, lastKey: keys!.hi };
          const kinds = records.reduce((k, r) => k | extKindsOf(r.ext), 0);
          const options = { lastmodDateOnly: opts.lastmodDateOnly, stylesheet: opts.stylesheet, namespaces: opts.declare ? kinds & SHARD_EXTENSIONS : 0 };
          const reader = new D1RecordReader(env.DB, pageRows === null ? {} : { pageRows });
          const fromRecords = await bytes(renderUrlset(paged(reader.recordPages(range)), options));
          const fromRows = await bytes(renderUrlRows(paged(reader.rowPages(range)), options));
          expect(fromRows).toEqual(fromRecords);
        },
      ),
      { numRuns: 25, seed: 53 },
    );
  });

  it("reads pages of about 10,000 rows of a typical shard (demo products), 1,000 first", () => {
    const origin = "https://pages.example";
    const records = validRecords({ ...env, SITES: origin } as Env, withDemoExtensions("products", demoSection(origin, "products", 5_000), Date.now()));
    const rows: UrlRow[] = records.map((r, i) => [
      i + 1,
      r.loc,
      r.lastmod ?? null,
      r.changefreq ?? null,
      r.priority ?? null,
      r.ext ? JSON.stringify(r.ext) : null,
    ]);
    expect(nextPageRows(null)).toBe(FIRST_PAGE_ROWS);
    const next = nextPageRows(rows);
    expect(next).toBeGreaterThanOrEqual(8_000);
    expect(next).toBeLessThanOrEqual(12_000);
    // URLs of ~2 KB: pages of about 1,000 rows, the same bytes.
    const long = rows.map((r): UrlRow => [r[0], `${r[1]}?${"x".repeat(2_000)}`, r[2], r[3], r[4], r[5]]);
    expect(nextPageRows(long)).toBeLessThanOrEqual(1_000);
  });
});
