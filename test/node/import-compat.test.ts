/**
 * The compatibility corpus (test/fixtures/compat/, sources in its README): sitemaps in the shapes
 * peers' test suites and CMSs produce, feeds, and malformed XML, each read by the CLI in
 * `--dry-run --json` mode with its expected record count, counts and exit status.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli, summaryOf } from "./import-helpers.ts";

const CORPUS = fileURLToPath(new URL("../fixtures/compat/", import.meta.url));

interface Expected {
  file: string;
  records: number;
  invalid: number;
  exitCode: number;
  duplicates?: number;
  /** Dropped kinds and their counts (only these are checked). */
  dropped?: Record<string, number>;
  /** A line of stderr that must appear. */
  stderr?: RegExp;
  /** With --strict. */
  strict?: { records: number; invalid: number; exitCode: number };
}

const CORPUS_FILES: Expected[] = [
  {
    file: "sitemapjs-alltags-shape.xml",
    records: 5,
    invalid: 1,
    exitCode: 1,
    dropped: {
      "<video:video>: videos[].title [required]": 1,
      "<xhtml:link>: alternates[].hreflang [required]": 1,
      "<image:image>: images[].loc [absolute-url]": 1,
      "<news:news>: news.publication_date [w3c-datetime]": 1,
      "<video:price>": 1,
      "<xhtml:link>": 1,
    },
    stderr: /sitemapjs-alltags-shape\.xml:69: loc: /,
    strict: { records: 1, invalid: 5, exitCode: 1 },
  },
  {
    file: "deprecated-extensions.xml",
    records: 4,
    invalid: 0,
    exitCode: 0,
    dropped: { "<mobile:mobile>": 1, "<geo:geo>": 1, "<codesearch:codesearch>": 1, "<xhtml:link>: alternates[].hreflang [required]": 3 },
    stderr:
      /not imported: 3 × <xhtml:link>: alternates\[\]\.hreflang \[required\] \(first at .*deprecated-extensions\.xml:8\): the URL was kept without it/,
    strict: { records: 2, invalid: 2, exitCode: 1 },
  },
  {
    file: "duplicate-locs.xml",
    records: 4,
    invalid: 0,
    exitCode: 0,
    duplicates: 2,
    stderr: /2 locs repeat an earlier one \(first at .*duplicate-locs\.xml:5\): the last occurrence of each was kept/,
    strict: { records: 4, invalid: 2, exitCode: 1 },
  },
  {
    file: "sitemap-generator-rb.xml.gz",
    records: 5,
    invalid: 0,
    exitCode: 0,
    dropped: { "<mobile:mobile>": 1, "<geo:geo>": 1, "<pagemap:PageMap>": 1, "<video:category>": 1 },
  },
  { file: "wordpress/wp-sitemap.xml", records: 7, invalid: 0, exitCode: 0 },
  { file: "yoast/sitemap_index.xml", records: 5, invalid: 0, exitCode: 0, dropped: { "<image:image>: images[].loc [scheme]": 1 } },
  { file: "shopify/sitemap.xml", records: 6, invalid: 0, exitCode: 0 },
  { file: "next-sitemap/sitemap.xml", records: 4, invalid: 0, exitCode: 0 },
  {
    file: "feed-rss2.xml",
    records: 3,
    invalid: 0,
    exitCode: 0,
    dropped: { "<item> without a usable link": 1, "<pubDate> that is not a date": 1 },
    stderr: /not imported: 1 × <item> without a usable link \(first at .*feed-rss2\.xml:22\)/,
  },
  { file: "feed-rss1.rdf", records: 1, invalid: 0, exitCode: 0 },
  { file: "feed-no-extension", records: 2, invalid: 0, exitCode: 0 },
  { file: "feed-atom10.xml", records: 3, invalid: 0, exitCode: 0, dropped: { "<entry> without a usable link": 1 } },
  { file: "feed-atom03.xml", records: 2, invalid: 0, exitCode: 0 },
  { file: "malformed.xml", records: 0, invalid: 0, exitCode: 1, stderr: /malformed\.xml: line 6: <\/urlset> does not close <url>/ },
  { file: "malformed-feed.rss", records: 0, invalid: 0, exitCode: 1, stderr: /malformed-feed\.rss: line 7: <\/channel> does not close <item>/ },
];

describe("compatibility corpus (--dry-run --json)", () => {
  for (const expected of CORPUS_FILES) {
    it(`${expected.file}: ${expected.records} records, exit ${expected.exitCode}`, async () => {
      const run = await runCli([`${CORPUS}${expected.file}`, "--dry-run", "--json", "--quiet"]);
      const summary = summaryOf(run);
      expect(run.code).toBe(expected.exitCode);
      expect(summary).toMatchObject({
        records: expected.records,
        invalid: expected.invalid,
        exitCode: expected.exitCode,
        duplicates: expected.duplicates ?? 0,
      });
      if (expected.dropped) expect(summary["dropped"]).toMatchObject(expected.dropped);
      if (expected.stderr) expect(run.stderr).toMatch(expected.stderr);
      if (expected.strict) {
        const strict = summaryOf(await runCli([`${CORPUS}${expected.file}`, "--dry-run", "--json", "--quiet", "--strict"]));
        expect(strict).toMatchObject({ ...expected.strict, duplicates: 0 });
      }
    });
  }
});
