/**
 * What the import CLI may cost and where it may go, and what it reads of the machine: caps per
 * text node, per entry and on decompressed bytes (each an error naming file and line); a remote
 * index leads only to its own host (--allow-host for more), redirects included; a developer's
 * .dev.vars is read only where asked. Also the feed readers' links and dates.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SitemapXmlReader } from "../../src/ingest/sitemap-xml.ts";
import { runCli, summaryOf, tempInputs } from "./import-helpers.ts";

const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"';
const IMAGE = 'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"';

const { write } = tempInputs("import-limits-");

describe("size caps", () => {
  it("stops an element whose text grows past 1 MiB in pieces (split by comments or child elements)", async () => {
    const piece = "a".repeat(600_000);
    const inLoc = write("loc-pieces.xml", `<urlset ${NS}>\n<url>\n<loc>${piece}<!---->${piece}<!---->${piece}</loc>\n</url>\n</urlset>\n`);
    const run = await runCli([inLoc, "--dry-run", "--json"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${inLoc}: line 3: <loc> (line 3) holds more than 1048576 characters of text`);

    // Text of <url> itself, between its children: it used to keep growing.
    const mixed = write("url-text.xml", `<urlset ${NS}>\n<url>\n${`${piece}<x/>\n`.repeat(3)}<loc>http://a.example/</loc></url>\n</urlset>\n`);
    const mixedRun = await runCli([mixed, "--dry-run", "--json"]);
    expect(mixedRun.code).toBe(1);
    expect(mixedRun.stderr).toMatch(/url-text\.xml: line \d+: <url> \(line 2\) holds more than 1048576 characters of text/);
  });

  it("stops an entry holding more than 8 MiB of text or attributes in many elements", async () => {
    const caption = `<image:image><image:loc>http://a.example/i.jpg</image:loc><image:caption>${"c".repeat(500_000)}</image:caption></image:image>\n`;
    const path = write("big-entry.xml", `<urlset ${NS} ${IMAGE}>\n<url><loc>http://a.example/</loc>\n${caption.repeat(17)}</url>\n</urlset>\n`);
    const run = await runCli([path, "--dry-run", "--json"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`${path}: line \\d+: the entry starting at line 2 holds more than 8388608 characters of text and attributes`));

    // The same in attributes: each tag stays under the 1 MiB markup cap, together they do not.
    const link = `<xhtml:link rel="alternate" hreflang="en" href="http://a.example/${"p".repeat(500_000)}"/>\n`;
    const attrs = write(
      "big-attrs.xml",
      `<urlset ${NS} xmlns:xhtml="http://www.w3.org/1999/xhtml">\n<url><loc>http://a.example/</loc>\n${link.repeat(17)}</url>\n</urlset>\n`,
    );
    const attrsRun = await runCli([attrs, "--dry-run", "--json"]);
    expect(attrsRun.code).toBe(1);
    expect(attrsRun.stderr).toMatch(
      new RegExp(`${attrs}: line \\d+: the entry starting at line 2 holds more than 8388608 characters of text and attributes`),
    );
  });

  it("stops a .gz input that decompresses past --max-decompressed, naming file and line", async () => {
    const urls = Array.from({ length: 40_000 }, (_, i) => `<url><loc>http://a.example/${i}</loc></url>`).join("\n");
    const path = write("bomb.xml.gz", gzipSync(`<urlset ${NS}>\n${urls}\n</urlset>\n`));
    const run = await runCli([path, "--dry-run", "--json", "--max-decompressed", "1"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`${path}:\\d+: decompresses to more than 1 MiB: stopped`));
    // Under the cap (the default is 256 MiB) the same file reads.
    expect(summaryOf(await runCli([path, "--dry-run", "--json", "--quiet"]))).toMatchObject({ records: 40_000, exitCode: 0 });

    const text = write("bomb.txt.gz", gzipSync(`${Array.from({ length: 60_000 }, (_, i) => `http://a.example/${i}`).join("\n")}\n`));
    const textRun = await runCli([text, "--dry-run", "--json", "--max-decompressed", "1"]);
    expect(textRun.code).toBe(1);
    expect(textRun.stderr).toMatch(new RegExp(`${text}:\\d+: decompresses to more than 1 MiB`));
  });
});

describe("sitemap indexes", () => {
  it("keep at most 50,000 shards in memory; the rest are reported and skipped", async () => {
    write("one.xml", `<urlset ${NS}><url><loc>http://a.example/one</loc></url></urlset>`);
    const entries = Array.from({ length: 50_002 }, (_, i) => `<sitemap><loc>${i === 0 ? "one.xml" : `missing-${i}.xml`}</loc></sitemap>`);
    const index = write("huge-index.xml", `<sitemapindex ${NS}>\n${entries.join("\n")}\n</sitemapindex>\n`);
    const run = await runCli([index, "--dry-run", "--json", "--quiet", "--max-reported", "3"]);
    const summary = summaryOf(run);
    // One shard read; 49,999 missing ones reported; one report for the two past the limit.
    expect(summary).toMatchObject({ records: 1, invalid: 50_000, exitCode: 1 });
    expect(run.stderr).toContain(`${index}:50002: more than 50000 sitemaps in one index: the rest are skipped`);
  });
});

describe("remote indexes lead only to their own host", () => {
  // Two loopback servers: another port is another host (as a browser's origin has it).
  let own: Server;
  let other: Server;
  let ownHost = "";
  let otherHost = "";
  const otherRequests: string[] = [];
  const urlset = (name: string) => `<urlset ${NS}><url><loc>http://h.example/${name}</loc></url></urlset>`;
  const listen = async (server: Server): Promise<string> => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `127.0.0.1:${(server.address() as { port: number }).port}`;
  };
  beforeAll(async () => {
    own = createServer((req, res) => {
      if (req.url === "/index.xml") {
        res.writeHead(200, { "content-type": "application/xml" });
        res.end(
          `<sitemapindex ${NS}>\n<sitemap><loc>http://${ownHost}/own.xml</loc></sitemap>\n` +
            `<sitemap><loc>http://${otherHost}/other.xml</loc></sitemap>\n<sitemap><loc>/jump.xml</loc></sitemap>\n</sitemapindex>`,
        );
      } else if (req.url === "/jump.xml") {
        res.writeHead(302, { location: `http://${otherHost}/landed.xml` }).end();
      } else if (req.url === "/own.xml") {
        res.writeHead(200, { "content-type": "application/xml" }).end(urlset("own"));
      } else res.writeHead(404).end();
    });
    other = createServer((req, res) => {
      otherRequests.push(req.url ?? "");
      res.writeHead(200, { "content-type": "application/xml" }).end(urlset(req.url?.slice(1) ?? ""));
    });
    ownHost = await listen(own);
    otherHost = await listen(other);
  });
  afterAll(async () => {
    await Promise.all([own, other].map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it("skips shards and redirects to other hosts unless --allow-host names them", async () => {
    const run = await runCli([`http://${ownHost}/index.xml`, "--dry-run", "--json"]);
    expect(summaryOf(run)).toMatchObject({ records: 1, invalid: 2, exitCode: 1 });
    expect(run.stderr).toContain(
      `index.xml:3: shard http://${otherHost}/other.xml is on ${otherHost}, not on the index's host ${ownHost}: skipped (pass --allow-host ${otherHost} to follow it)`,
    );
    expect(run.stderr).toContain(`index.xml:4: http://${ownHost}/jump.xml: ${otherHost} is not an allowed host`);
    // Nothing at all was asked of the other host.
    expect(otherRequests).toEqual([]);

    const allowed = await runCli([`http://${ownHost}/index.xml`, "--dry-run", "--json", "--allow-host", otherHost]);
    expect(summaryOf(allowed)).toMatchObject({ records: 3, invalid: 0, exitCode: 0 });
    expect(otherRequests.sort()).toEqual(["/landed.xml", "/other.xml"]);
  });

  it("refuses a malformed --allow-host", async () => {
    const run = await runCli(["x.xml", "--dry-run", "--allow-host", "http://evil.example/"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--allow-host must be a host name (with a port if not the default), got "http://evil.example/"');
  });
});

describe("tolerant validation", () => {
  it("drops the parts the core rejects by their field paths, rejects a record only for its own fields, and --strict drops nothing", async () => {
    const en = { hreflang: "en", href: "https://a.example/en" };
    const path = write(
      "parts.ndjson",
      [
        // Two variants whose sets disagree: both lose their links, both URLs stay.
        { loc: "https://a.example/en", alternates: [en, { hreflang: "de", href: "https://a.example/de" }] },
        {
          loc: "https://a.example/de",
          alternates: [
            { hreflang: "de", href: "https://a.example/de" },
            { hreflang: "fr", href: "https://a.example/fr" },
          ],
        },
        { loc: "https://a.example/x", images: "not a list", lastmod: "2024-01-01" },
        { loc: "https://a.example/y", images: [{ loc: "https://a.example/ok.jpg" }, { loc: "ftp://a.example/no.jpg" }] },
        // Its own lastmod is bad: rejected, whatever else it has.
        { loc: "https://a.example/z", lastmod: "yesterday", videos: [{ title: "t" }] },
      ]
        .map((r) => JSON.stringify(r))
        .join("\n"),
    );
    const run = await runCli([path, "--dry-run", "--json"]);
    expect(summaryOf(run)).toMatchObject({
      records: 4,
      invalid: 1,
      exitCode: 1,
      dropped: { "<xhtml:link>: alternates [hreflang-mismatch]": 2, "<image:image>: images [type]": 1, "<image:image>: images[].loc [scheme]": 1 },
    });
    expect(run.stderr).toMatch(/parts\.ndjson:5: lastmod: .*\[w3c-datetime\]/);
    expect(run.stderr).toContain(`not imported: 2 × <xhtml:link>: alternates [hreflang-mismatch] (first at ${path}:1): the URL was kept without it`);

    const strict = await runCli([path, "--dry-run", "--json", "--strict"]);
    // Strict: the variant the mismatch is reported on, the two image records and the bad lastmod are invalid.
    expect(summaryOf(strict)).toMatchObject({ records: 1, invalid: 4, dropped: {}, exitCode: 1 });
  });
});

describe(".dev.vars", () => {
  it("is not read by the tests' CLI runs, even with one in the directory the CLI runs in", async () => {
    // A stand-in for the project root after `npm start`: a .dev.vars with an ADMIN_TOKEN.
    const root = mkdtempSync(join(tmpdir(), "import-root-"));
    try {
      writeFileSync(join(root, ".dev.vars"), 'ADMIN_TOKEN="0123456789abcdef0123456789abcdef"\n');
      const isolated = await runCli(["a.xml"], {}, root);
      expect(isolated.code).toBe(2);
      expect(isolated.stderr).toMatch(/^error: no admin token/);
      // Named explicitly, it is read: the token is found and the CLI goes on to the (missing) file.
      const named = await runCli(["a.xml", "--json"], { IMPORT_DEV_VARS: join(root, ".dev.vars") }, root);
      expect(named.code).toBe(1);
      expect(named.stderr).toContain("cannot read a.xml: no such file");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("feeds", () => {
  function read(xml: string, base?: string) {
    const dropped: string[] = [];
    const reader = new SitemapXmlReader((kind, line) => dropped.push(`${kind}@${line}`), base);
    const items = [];
    for (let i = 0; i < xml.length; i += 7) items.push(...reader.feed(xml.slice(i, i + 7)));
    items.push(...reader.end());
    return { kind: reader.kind, items: items.map((i) => (i.kind === "record" ? i.input : i)), dropped };
  }

  it("reads RSS 2.0 items: link or permalink guid, pubDate as a UTC W3C datetime, relative links against the feed's URL", () => {
    const rss = read(
      [
        '<rss version="2.0"><channel><title>t</title><link>https://b.example/</link>',
        "<item><link>https://b.example/1</link><pubDate>Fri, 01 Mar 2024 09:12:44 +0100</pubDate></item>",
        "<item><guid>https://b.example/2</guid><pubDate>Tue, 05 Mar 2024 12:01:02 EST</pubDate></item>",
        '<item><guid isPermaLink="false">https://b.example/3</guid></item>',
        "<item><link>/4</link></item>",
        "<item><link>javascript:alert(1)</link><title>x</title></item>",
        "</channel></rss>",
      ].join("\n"),
      "https://b.example/feed.xml",
    );
    expect(rss.kind).toBe("rss");
    expect(rss.items).toEqual([
      { loc: "https://b.example/1", lastmod: "2024-03-01T08:12:44Z" },
      { loc: "https://b.example/2", lastmod: "2024-03-05T17:01:02Z" },
      { loc: "https://b.example/4" },
    ]);
    expect(rss.dropped).toEqual(["<item> without a usable link@4", "<item> without a usable link@6"]);

    // A bad reference in a description (HTML entities are not XML) does not touch the item; in its link it does.
    const entities = read(
      '<rss version="2.0"><channel>\n<item><link>https://b.example/1</link><description>a&nbsp;b</description></item>\n<item><link>https://b.example/2?a=1&b=2</link></item>\n</channel></rss>',
    );
    expect(entities.items).toEqual([{ loc: "https://b.example/1" }, { loc: "https://b.example/2?a=1&b=2" }]);
    const withErrors = new SitemapXmlReader(() => {});
    const items = [
      ...withErrors.feed(
        "<rss><channel><item><link>https://b.example/1</link><description>a&nbsp;b</description></item><item><link>https://b.example/2?a=1&b=2</link></item></channel></rss>",
      ),
      ...withErrors.end(),
    ];
    expect(items.map((i) => i.error)).toEqual([undefined, expect.stringContaining('"&" must be escaped')]);
  });

  it("reads Atom 1.0 and 0.3 entries: the HTML alternate link against xml:base, updated / modified / published / issued", () => {
    const atom = read(
      [
        '<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://n.example/news/">',
        '<entry><link rel="self" href="/api/1"/><link href="a"/><updated>2024-03-01T09:12:44.5+01:00</updated><published>2020-01-01T00:00:00Z</published></entry>',
        '<entry xml:base="/x/"><link rel="alternate" type="application/json" href="b.json"/><link rel="alternate" type="text/html" href="b"/><published>2024-03-06</published></entry>',
        '<entry><link rel="enclosure" href="https://n.example/a.mp3"/></entry>',
        "</feed>",
      ].join("\n"),
    );
    expect(atom.kind).toBe("atom");
    expect(atom.items).toEqual([
      { loc: "https://n.example/news/a", lastmod: "2024-03-01T08:12:44.500Z" },
      { loc: "https://n.example/x/b", lastmod: "2024-03-06" },
    ]);
    expect(atom.dropped).toEqual(["<entry> without a usable link@4"]);

    const old = read(
      '<feed version="0.3" xmlns="http://purl.org/atom/ns#"><entry><link rel="alternate" type="text/html" href="http://o.example/e"/><issued>2005-07-31T12:29:29Z</issued><modified>2005-08-01T08:00:00Z</modified></entry></feed>',
    );
    expect(old.items).toEqual([{ loc: "http://o.example/e", lastmod: "2005-08-01T08:00:00Z" }]);
  });
});
