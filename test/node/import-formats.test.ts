/**
 * The import CLI's readers without a Worker: the streaming XML reader (saxes) at every chunk split,
 * sitemap mapping, CSV / NDJSON / text line numbers, gzip, sitemap indexes (local, over loopback
 * HTTP, loops, escapes), and the command line itself (dry runs as a child process).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseCli } from "../../scripts/import/cli.ts";
import { readCsv } from "../../scripts/import/csv.ts";
import type { Item } from "../../scripts/import/item.ts";
import { LOCAL_SERVER_FILE, recordLocalServer } from "../../scripts/local-server.ts";
import { whereToLook } from "../../scripts/start-output.ts";
import { type SitemapItem, SitemapXmlReader } from "../../src/ingest/sitemap-xml.ts";
import { XmlError, type XmlEvent, XmlEvents } from "../../src/ingest/xml.ts";
import { referenceProblem } from "../../src/ingest/xml-references.ts";
import { FIXTURES, runCli, summaryOf, tempInputs } from "./import-helpers.ts";

const inputs = tempInputs("import-formats-");
const { write } = inputs;

/** All events of a document fed in pieces of `size` characters. */
function tokenize(xml: string, size: number): XmlEvent[] {
  const t = new XmlEvents();
  const events: XmlEvent[] = [];
  for (let i = 0; i < xml.length; i += size) events.push(...t.feed(xml.slice(i, i + size)));
  events.push(...t.end());
  // Text may arrive in several events at some splits; merge neighbours for comparison.
  const merged: XmlEvent[] = [];
  for (const e of events) {
    const last = merged[merged.length - 1];
    if (e.kind === "text" && last?.kind === "text") last.text += e.text;
    else merged.push(e.kind === "text" ? { ...e } : e);
  }
  return merged;
}

function readSitemap(xml: string, size = xml.length): { items: SitemapItem[]; dropped: string[] } {
  const dropped: string[] = [];
  const reader = new SitemapXmlReader((element, line) => dropped.push(`${element}@${line}`));
  const items: SitemapItem[] = [];
  for (let i = 0; i < xml.length; i += size) items.push(...reader.feed(xml.slice(i, i + size)));
  items.push(...reader.end());
  return { items, dropped };
}

const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"';

describe("XmlEvents", () => {
  const doc = [
    '<?xml version="1.0" encoding="utf-8"?>',
    "<!-- a comment with <tags> & ampersands -->",
    `<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:pic="http://www.google.com/schemas/sitemap-image/1.1">`,
    "  <s:url>",
    "    <s:loc>http://a.example/?x=1&amp;y=&lt;2&gt;&#38;&#x41;&quot;&apos;</s:loc>",
    '    <pic:image note="a > b &amp; c" other=\'"q"\'><pic:loc><![CDATA[http://a.example/<raw>&amp;]]></pic:loc></pic:image>',
    "    <s:lastmod>2024-01-01</s:lastmod><empty/>",
    "  </s:url>",
    "</s:urlset>",
    "",
  ].join("\n");

  it("gives the same events, with lines, whatever the chunk boundaries", () => {
    const whole = tokenize(doc, doc.length);
    for (const size of [1, 2, 3, 5, 8, 13, 64]) expect(tokenize(doc, size), `chunks of ${size}`).toEqual(whole);
    const starts = whole.filter((e) => e.kind === "start").map((e) => [e.local, e.ns.split("/").pop(), e.line]);
    expect(starts).toEqual([
      ["urlset", "0.9", 3],
      ["url", "0.9", 4],
      ["loc", "0.9", 5],
      ["image", "1.1", 6],
      ["loc", "1.1", 6],
      ["lastmod", "0.9", 7],
      ["empty", "", 7],
    ]);
    const texts = whole.filter((e) => e.kind === "text").map((e) => (e as { text: string }).text.trim());
    expect(texts).toEqual(["http://a.example/?x=1&y=<2>&A\"'", "http://a.example/<raw>&amp;", "2024-01-01"]);
    const image = whole.find((e) => e.kind === "start" && e.local === "image") as { attrs: Map<string, string> };
    expect(Object.fromEntries(image.attrs)).toEqual({ note: "a > b & c", other: '"q"' });
  });

  it("throws XmlError with the line for broken structure, DTDs and other encodings", () => {
    const cases: [string, number, RegExp][] = [
      [`<urlset ${NS}>\n<url>\n</urlset>`, 3, /does not close <url>/],
      [`<urlset ${NS}>\n<url>`, 2, /not closed/],
      [`<!DOCTYPE x [<!ENTITY a "b">]>\n<urlset/>`, 1, /DOCTYPE/],
      [`<?xml version="1.0" encoding="ISO-8859-1"?>\n<urlset/>`, 1, /ISO-8859-1/],
      [`<urlset/>\n<urlset/>`, 2, /after the root/],
      [`\n\n`, 3, /no root element/],
      [`<urlset>\n<url a="1" a="2"/></urlset>`, 2, /twice/],
      [`<urlset ${NS}><url><loc>x</loc></url></urlset>trailing`, 1, /text after the root/],
    ];
    for (const [xml, line, message] of cases) {
      let error: unknown;
      try {
        tokenize(xml, 4);
      } catch (err) {
        error = err;
      }
      expect(error, xml).toBeInstanceOf(XmlError);
      expect((error as XmlError).line, xml).toBe(line);
      expect((error as XmlError).message, xml).toMatch(message);
    }
  });

  it("reports bad entity references on the text, not as a fatal error", () => {
    const text = (inner: string): XmlEvent | undefined => tokenize(`<a>${inner}</a>`, 3).find((e) => e.kind === "text");
    expect(text("a &amp; b")).toMatchObject({ text: "a & b" });
    expect(text("a &amp; b")).not.toHaveProperty("error");
    expect(text("?a=1&b=2")).toMatchObject({ text: "?a=1&b=2", error: expect.stringMatching(/must be escaped as &amp;/) });
    expect(text("&nbsp;")).toMatchObject({ error: expect.stringMatching(/unknown entity &nbsp;/) });
    expect(text("&#0;")).toMatchObject({ error: expect.stringMatching(/not an XML character/) });
    expect(text("&#x1F600;")).toMatchObject({ text: "😀" });
    expect(text("&#x1F600;")).not.toHaveProperty("error");
    expect(referenceProblem("&b=2")).toMatch(/must be escaped as &amp;/);
    // saxes' own complaints about a character are the entry's problem too, not the file's
    expect(text("\u0001")).toMatchObject({ error: expect.stringMatching(/XML does not allow/) });
    // the rest of the document is still read, and a bad reference in an attribute marks its start tag
    const events = tokenize(`<a>\n<b>x&y</b>\n<c d="&bogus;">z</c>\n</a>`, 2);
    expect(events.filter((e) => e.kind === "text").map((e) => (e as { text: string }).text)).toEqual(["x&y", "z"]);
    expect(events.find((e) => e.kind === "start" && e.local === "c")).toMatchObject({ line: 3, error: expect.stringMatching(/unknown entity &bogus;/) });
  });
});

describe("SitemapXmlReader", () => {
  it("maps core fields and every extension to record inputs, one item per <url>, at any split", () => {
    const xml = `<?xml version="1.0"?>
<urlset ${NS} xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:x="urn:other">
  <url>
    <loc>  http://a.example/1  </loc><lastmod>2024-01-01</lastmod><changefreq>daily</changefreq><priority>0.5</priority>
    <image:image><image:loc>http://cdn.example/1.jpg</image:loc><image:title>T</image:title></image:image>
    <video:video>
      <video:thumbnail_loc>http://cdn.example/t.jpg</video:thumbnail_loc><video:title>V</video:title>
      <video:description>D</video:description><video:player_loc>http://a.example/player</video:player_loc>
      <video:rating>4.2</video:rating><video:tag>a</video:tag><video:tag>b</video:tag>
      <video:restriction relationship="allow">US CA</video:restriction>
      <video:uploader info="http://a.example/u">Uli</video:uploader><video:price currency="EUR">1</video:price>
    </video:video>
    <news:news><news:publication><news:name>N</news:name><news:language>en</news:language></news:publication>
      <news:publication_date>2024-01-01T10:00:00Z</news:publication_date><news:title>Title</news:title><news:keywords>k</news:keywords></news:news>
    <xhtml:link rel="alternate" hreflang="en" href="http://a.example/1"/>
    <x:custom>dropped</x:custom>
  </url>
  <url><loc>http://a.example/2</loc><loc>http://a.example/3</loc></url>
  <url><loc>http://a.example/?a=1&b=2</loc></url>
</urlset>`;
    const whole = readSitemap(xml);
    for (const size of [1, 7, 100]) expect(readSitemap(xml, size)).toEqual(whole);
    expect(whole.items).toEqual([
      {
        kind: "record",
        line: 4,
        input: {
          loc: "http://a.example/1",
          lastmod: "2024-01-01",
          changefreq: "daily",
          priority: "0.5",
          images: [{ loc: "http://cdn.example/1.jpg", title: "T" }],
          videos: [
            {
              thumbnail_loc: "http://cdn.example/t.jpg",
              title: "V",
              description: "D",
              player_loc: "http://a.example/player",
              rating: 4.2,
              tags: ["a", "b"],
              restriction: { relationship: "allow", countries: "US CA" },
              uploader: { name: "Uli", info: "http://a.example/u" },
            },
          ],
          news: { publication: { name: "N", language: "en" }, publication_date: "2024-01-01T10:00:00Z", title: "Title" },
          alternates: [{ hreflang: "en", href: "http://a.example/1" }],
        },
      },
      { kind: "record", line: 19, input: { loc: "http://a.example/3" }, error: "<url> has more than one <loc> (line 19)" },
      { kind: "record", line: 20, input: { loc: "http://a.example/?a=1&b=2" }, error: expect.stringMatching(/must be escaped as &amp;/) },
    ]);
    expect(whole.dropped).toEqual(["<video:price>@12", "<news:keywords>@15", "<custom> in namespace urn:other@17"]);
  });

  it("reads a sitemap index and refuses other documents", () => {
    const index = readSitemap(`<sitemapindex ${NS}>\n<sitemap><loc> a.xml.gz </loc><lastmod>2024-01-01</lastmod></sitemap>\n<sitemap/>\n</sitemapindex>`);
    expect(index.items).toEqual([
      { kind: "sitemap", line: 2, loc: "a.xml.gz" },
      { kind: "sitemap", line: 3, loc: "", error: "<sitemap> has no <loc>" },
    ]);
    expect(() => readSitemap("<html><body/></html>")).toThrow(
      /<html> is not a sitemap or a feed: the root element must be <urlset>, <sitemapindex>, <rss> or an Atom <feed>/,
    );
  });
});

/** Items of a CSV given as text, read in chunks of `size` bytes. */
async function csvItems(text: string, size = 3): Promise<Item[]> {
  const data = new TextEncoder().encode(text);
  async function* bytes(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
  }
  const opened = {
    name: "t.csv",
    base: { kind: "file" as const, dir: inputs.dir() },
    size: data.length,
    consumed: () => 0,
    gzip: false,
    head: data,
    bytes: bytes(),
  };
  const items: Item[] = [];
  for await (const item of readCsv(opened)) items.push(item);
  return items;
}

describe("CSV records", () => {
  it("parses RFC 4180 fields", async () => {
    // No header: the columns are loc, lastmod, changefreq, priority, section in that order.
    expect(await csvItems('a,"b,c","d""e",,f')).toEqual([{ line: 1, input: { loc: "a", lastmod: "b,c", changefreq: 'd"e', priority: "", section: "f" } }]);
    expect(await csvItems('"open\nstill')).toEqual([{ line: 1, error: "unterminated quoted field at the end of the file" }]);
    expect(await csvItems('"multi\nline",x\nnext')).toEqual([
      { line: 1, input: { loc: "multi\nline", lastmod: "x" } },
      { line: 3, input: { loc: "next" } },
    ]);
    expect(await csvItems("a\tb")).toEqual([{ line: 1, input: { loc: "a", lastmod: "b" } }]);
    expect(await csvItems('a"b,c\nok')).toEqual([
      { line: 1, error: expect.stringMatching(/must be quoted/) },
      { line: 2, input: { loc: "ok" } },
    ]);
    expect(await csvItems('"a"b,c\nok')).toEqual([
      { line: 1, error: expect.stringMatching(/after a quoted field/) },
      { line: 2, input: { loc: "ok" } },
    ]);
  });
});

describe("import CLI, dry runs", () => {
  it("validates the fixture index (two gz shards found next to it) and the CSV, text and NDJSON fixtures", async () => {
    const index = await runCli([join(FIXTURES, "shop-index.xml"), "--dry-run", "--json", "--site", "http://shop.example"]);
    expect(index.code, index.stderr).toBe(0);
    expect(summaryOf(index)).toMatchObject({ mode: "dry-run", records: 224, invalid: 0, sent: 0, dropped: {} });
    expect(index.stderr).toMatch(/validating: 224 records, [\d,]+ records\/s, 100\.0%/);
    for (const [file, records] of [
      ["products.csv", 4],
      ["urls.txt", 4],
      ["records.ndjson", 3],
    ] as const) {
      const run = await runCli([join(FIXTURES, file), "--dry-run", "--json", "--site", "http://shop.example"]);
      expect(run.code, `${file}: ${run.stderr}`).toBe(0);
      expect(summaryOf(run), file).toMatchObject({ records, invalid: 0 });
    }
  });

  it("names the line of every bad record in CSV, text (incl. invalid UTF-8) and NDJSON input", async () => {
    const csv = write(
      "bad.csv",
      'loc,lastmod,priority\nhttp://a.example/1,2024-01-01,0.5\n"http://a.example/2\nstill quoted",2024-01-01,\nhttp://a.example/3,yesterday,\nhttp://a.example/4,,0.3,extra\n',
    );
    const csvRun = await runCli([csv, "--dry-run", "--json"]);
    expect(csvRun.code).toBe(1);
    expect(summaryOf(csvRun)).toMatchObject({ records: 1, invalid: 3 });
    expect(csvRun.stderr).toContain(`${csv}:3: loc:`); // a quoted newline: the record starts on line 3
    expect(csvRun.stderr).toContain(`${csv}:5: lastmod:`);
    expect(csvRun.stderr).toContain(`${csv}:6: 4 fields, but there are only 3 columns`);

    const text = write(
      "bad.txt",
      Buffer.concat([
        Buffer.from("\uFEFFhttp://a.example/1\njavascript:alert(1)\nhttp://a.example/\xff"),
        Buffer.from([0xff, 0x0a]),
        Buffer.from("http://a.example/4\n"),
      ]),
    );
    const textRun = await runCli([text, "--dry-run", "--json"]);
    expect(summaryOf(textRun)).toMatchObject({ records: 2, invalid: 2 });
    expect(textRun.stderr).toContain(`${text}:2: loc:`);
    expect(textRun.stderr).toContain("[scheme]");
    expect(textRun.stderr).toContain(`${text}:3: line is not valid UTF-8`);

    const sites = write("sites.ndjson", '{"loc":"http://a.example/1"}\n[1]\n{"loc":"http://b.example/1"}\n');
    const sitesRun = await runCli([sites, "--dry-run", "--json", "--site", "http://a.example"]);
    expect(summaryOf(sitesRun)).toMatchObject({ records: 1, invalid: 2 });
    expect(sitesRun.stderr).toContain(`${sites}:2: each line must be a JSON object`);
    expect(sitesRun.stderr).toMatch(new RegExp(`${sites}:3: loc: .*\\[site\\]`));
  });

  it("streams a large gzip sitemap, detected by content whatever its name", async () => {
    const n = 60_000;
    const parts = [`<?xml version="1.0" encoding="UTF-8"?>\n<urlset ${NS}>\n`];
    for (let i = 0; i < n; i++)
      parts.push(`<url><loc>http://big.example/item/${i}?ref=a&amp;b=${i % 7}</loc><lastmod>2024-02-0${1 + (i % 9)}</lastmod></url>\n`);
    parts.push("</urlset>\n");
    const file = write("big.data", gzipSync(parts.join("")));
    const run = await runCli([file, "--dry-run", "--json", "--batch-size", "5000", "--progress-interval", "1"]);
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run)).toMatchObject({ records: n, invalid: 0 });
    expect(run.stderr).toMatch(/validating: 60,000 records, [\d,]+ records\/s, 100\.0%/);
  });

  it("reports broken gzip and broken XML with the file and line", async () => {
    const gz = gzipSync(`<urlset ${NS}><url><loc>http://a.example/</loc></url></urlset>`);
    const truncated = write("truncated.xml.gz", gz.subarray(0, gz.length - 12));
    const truncatedRun = await runCli([truncated, "--dry-run", "--json"]);
    expect(truncatedRun.code).toBe(1);
    expect(truncatedRun.stderr).toMatch(/truncated\.xml\.gz: (broken gzip data|line 1: unexpected end)/);

    const broken = write("broken.xml", `<urlset ${NS}>\n<url><loc>http://a.example/1</loc></url>\n<url><loc>http://a.example/2</url>\n</urlset>`);
    const brokenRun = await runCli([broken, "--dry-run", "--json"]);
    expect(brokenRun.code).toBe(1);
    expect(brokenRun.stderr).toContain(`${broken}: line 3: </url> does not close <loc>`);
  });

  it("follows index shards over loopback HTTP, skips loops, and keeps local shards inside the index's directory", async () => {
    const shard = (name: string, count: number) =>
      gzipSync(`<urlset ${NS}>${Array.from({ length: count }, (_, i) => `<url><loc>http://h.example/${name}/${i}</loc></url>`).join("")}</urlset>`);
    const files: Record<string, Buffer> = { "/s1.xml.gz": shard("s1", 30), "/nested/s2.xml.gz": shard("s2", 20) };
    const server: Server = createServer((req, res) => {
      const port = (server.address() as { port: number }).port;
      if (req.url === "/index.xml") {
        res.writeHead(200, { "content-type": "application/xml" });
        res.end(
          `<sitemapindex ${NS}><sitemap><loc>http://127.0.0.1:${port}/s1.xml.gz</loc></sitemap><sitemap><loc>nested/s2.xml.gz</loc></sitemap>` +
            `<sitemap><loc>/index.xml</loc></sitemap><sitemap><loc>/missing.xml</loc></sitemap></sitemapindex>`,
        );
        return;
      }
      const body = files[req.url ?? ""];
      if (!body) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/gzip", "content-length": String(body.length) });
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const run = await runCli([`http://127.0.0.1:${port}/index.xml`, "--dry-run", "--json"]);
      expect(summaryOf(run)).toMatchObject({ records: 50 });
      expect(run.stderr).toContain("was already read");
      expect(run.stderr).toMatch(/index\.xml:1: GET http:\/\/127\.0\.0\.1:\d+\/missing\.xml answered 404/);
      expect(summaryOf(run)).toMatchObject({ invalid: 2 });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }

    write("s3.xml", `<urlset ${NS}><url><loc>http://h.example/s3</loc></url></urlset>`);
    const index = write(
      "local-index.xml",
      `<sitemapindex ${NS}>\n<sitemap><loc>s3.xml</loc></sitemap>\n<sitemap><loc>../escape.xml</loc></sitemap>\n<sitemap><loc>https://h.example/gone/nowhere.xml</loc></sitemap>\n</sitemapindex>`,
    );
    const local = await runCli([index, "--dry-run", "--json", "--no-fetch"]);
    expect(summaryOf(local)).toMatchObject({ records: 1, invalid: 2 });
    expect(local.stderr).toContain(`${index}:3: shard ../escape.xml is outside the index's directory`);
    expect(local.stderr).toContain(`${index}:4: shard https://h.example/gone/nowhere.xml is not next to the index`);
  });
});

describe("command line", () => {
  const io = (env: Record<string, string> = {}, cwd = "/nonexistent") => ({ stdout: { write: () => true }, stderr: { write: () => true }, env, cwd });

  it("rejects unsafe or incomplete targets with exit 2", async () => {
    for (const args of [
      [],
      ["a.xml", "b.xml"],
      ["a.xml", "--url", "https://example.com"],
      ["a.xml", "--remote"],
      ["a.xml", "--remote", "--url", "http://example.com", "--token", "t"],
      ["a.xml"],
      ["a.xml", "--format", "json", "--dry-run"],
      ["a.xml", "--bogus"],
    ]) {
      const run = await runCli(args);
      expect(run.code, args.join(" ")).toBe(2);
      // One line, pointing to --help (not the whole usage again).
      expect(run.stderr, args.join(" ")).toMatch(/^error: [^\n]*\(npm run import -- --help for the options\)\n$/);
    }
  });

  it('an input URL nobody answers says which host and why, not only "fetch failed"', async () => {
    // A port that was just free: nothing listens there.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const url = `http://127.0.0.1:${port}/sitemap.xml`;
    const run = await runCli([url, "--dry-run"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${url}: 127.0.0.1:${port} could not be reached (ECONNREFUSED)`);
  });

  it("with no --url, reaches the server npm start recorded (any port); --url still wins", () => {
    const dir = mkdtempSync(join(tmpdir(), "import-local-server-"));
    try {
      const opts = (args: string[]) => parseCli(["x.xml", "--token", "t", ...args], io({}, dir));
      expect(opts([])).toMatchObject({ url: "http://localhost:8787/" });
      recordLocalServer(dir, "http://localhost:8881");
      expect(opts([])).toMatchObject({ url: "http://localhost:8881/" });
      expect(opts(["--url", "http://127.0.0.1:9000"])).toMatchObject({ url: "http://127.0.0.1:9000/" });
      writeFileSync(join(dir, LOCAL_SERVER_FILE), "not json");
      expect(opts([])).toMatchObject({ url: "http://localhost:8787/" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // npm start's printed command carries --url too when the port is not the default.
    const importLine = (origin: string) => whereToLook(origin, { token: "from", where: ".dev.vars" }, false).find((l) => l.includes("npm run import"));
    expect(importLine("http://localhost:8881")).toContain("npm run import -- my-sitemap.xml.gz --url http://localhost:8881");
    expect(importLine("http://localhost:8787")).not.toContain("--url");
  });

  it("takes the token from --token, then ADMIN_TOKEN, then (locally only) .dev.vars", () => {
    const dir = mkdtempSync(join(tmpdir(), "import-devvars-"));
    try {
      writeFileSync(join(dir, ".dev.vars"), 'OTHER=1\nADMIN_TOKEN="from-dev-vars"\n');
      const opts = (args: string[], env: Record<string, string> = {}) => parseCli(["x.xml", ...args], io(env, dir));
      expect(opts([])).toMatchObject({ token: "from-dev-vars", url: "http://localhost:8787/" });
      expect(opts([], { ADMIN_TOKEN: "from-env" })).toMatchObject({ token: "from-env" });
      expect(opts(["--token", "flag"], { ADMIN_TOKEN: "from-env" })).toMatchObject({ token: "flag" });
      expect(() => opts(["--remote", "--url", "https://sitemaps.example.com"])).toThrow(/no admin token/);
      expect(opts(["--remote", "--url", "https://sitemaps.example.com"], { ADMIN_TOKEN: "t" })).toMatchObject({ url: "https://sitemaps.example.com/" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
