/**
 * A crawler's view: raw HTTP on loopback (node:http never decodes, so the wire bytes are seen),
 * robots.txt first, sitemap.js's parsers as the third-party client, libxml2 (xmllint-wasm) for
 * schema validity, fast-xml-parser for the Atom feed.
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { parseSitemap, parseSitemapIndex } from "sitemap";
import { validateXml } from "../../node/support/xsd.ts";
import { type WireResponse, documentBytes, get, header } from "./http.ts";

export type Check = (condition: boolean, message: string) => void;

/** `/sitemap-{section}-{n}.xml[.gz]` (a section shard) or `/sitemap-news[n].xml[.gz]`. */
const SHARD = /\/sitemap-([a-z0-9_-]+)-([1-9][0-9]*)\.xml(\.gz)?$/;
const NEWS = /\/sitemap-news([0-9]*)\.xml(\.gz)?$/;

export interface CrawledDocument {
  url: string;
  kind: "shard" | "news";
  /** `section-n` for shards, `news[n]` for news sitemaps. */
  name: string;
  etag: string;
  /** ETag of the `.xml.gz` file form. */
  fileEtag: string;
  lastModified: string;
  /** The index's `<lastmod>` for this document. */
  indexLastmod: string | undefined;
  urls: string[];
  /** URL → its `<lastmod>` as served (if any). */
  lastmods: Map<string, string>;
  sha256: string;
}

interface AtomEntry {
  id: string;
  link: string;
  updated: string;
  title: string;
}

export interface Crawl {
  requests: number;
  documentsValidated: number;
  robots: string;
  sitemapLines: string[];
  indexEtag: string;
  documents: CrawledDocument[];
  /** URLs of the section shards (every occurrence, so duplicates stay visible). */
  shardUrls: string[];
  newsUrls: string[];
  feed: AtomEntry[] | null;
}

export const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** Validates a urlset / index once per distinct body (identical bytes need no second libxml2 pass). */
export class Validator {
  readonly #seen = new Map<string, string[]>();
  validated = 0;

  async check(xml: Buffer, kind: "urlset" | "siteindex"): Promise<string[]> {
    const key = `${kind}:${sha256(xml)}`;
    let errors = this.#seen.get(key);
    if (!errors) {
      const result = await validateXml(xml, kind);
      errors = result.valid ? [] : result.errors.slice(0, 3);
      this.#seen.set(key, errors);
    }
    this.validated++;
    return errors;
  }
}

/** The site's documents start with the XML declaration and (BROWSER_VIEW) the stylesheet PI. */
function hasStylesheet(xml: Buffer): boolean {
  return /^<\?xml version="1\.0" encoding="UTF-8"\?>\s*<\?xml-stylesheet type="text\/xsl" href="\/sitemap\.xsl"\?>/.test(xml.subarray(0, 200).toString());
}

function lastmodsOf(items: { url: string; lastmod?: string }[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of items) if (item.lastmod) out.set(item.url, item.lastmod);
  return out;
}

/** Parses and checks an Atom 1.0 feed (RFC 4287): the required elements of the feed and each entry. */
function parseAtom(xml: string, check: Check): AtomEntry[] {
  const wellFormed = XMLValidator.validate(xml);
  check(wellFormed === true, `feed is not well-formed XML: ${JSON.stringify(wellFormed)}`);
  const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@", isArray: (name) => name === "entry" || name === "link" });
  const doc = parser.parse(xml) as { feed?: Record<string, unknown> };
  const feed = doc.feed;
  check(feed !== undefined && feed["@xmlns"] === "http://www.w3.org/2005/Atom", "feed root is not an Atom <feed>");
  if (!feed) return [];
  for (const field of ["id", "title", "updated"]) check(typeof feed[field] === "string" && feed[field] !== "", `feed has no <${field}>`);
  const text = (value: unknown): string =>
    typeof value === "object" && value !== null ? String((value as Record<string, unknown>)["#text"] ?? "") : String(value ?? "");
  const entries = (feed["entry"] as Record<string, unknown>[] | undefined) ?? [];
  return entries.map((entry) => {
    const links = (entry["link"] as Record<string, string>[] | undefined) ?? [];
    const alternate = links.find((l) => (l["@rel"] ?? "alternate") === "alternate")?.["@href"] ?? "";
    const out = { id: text(entry["id"]), link: alternate, updated: text(entry["updated"]), title: text(entry["title"]) };
    check(out.id !== "" && out.title !== "" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.test(out.updated), `feed entry incomplete: ${JSON.stringify(out)}`);
    check(out.link === out.id, `feed entry link ${out.link} is not its id ${out.id}`);
    return out;
  });
}

/**
 * A crawler's whole path: `/robots.txt` → its `Sitemap:` lines (the index and the Atom feed) →
 * every document the index lists, as `.xml` gzip-encoded on the wire and as the `.xml.gz` file.
 * Every document is checked on the wire and validated (urlsets with extensions against
 * all-urlset.xsd, the index against siteindex.xsd); the feed is parsed as Atom.
 */
export async function crawl(port: number, origin: string, check: Check, validator = new Validator()): Promise<Crawl> {
  let requests = 0;
  let validated = 0;
  const fetchDoc = async (url: string, headers: Record<string, string> = {}): Promise<WireResponse> => {
    const target = new URL(url);
    check(target.origin === origin, `${url} is not on the site ${origin}`);
    requests++;
    const res = await get(port, target.pathname + target.search, headers);
    check(res.complete && !res.error, `${url}: transfer broken (${res.error ?? "incomplete"})`);
    return res;
  };

  const robotsRes = await fetchDoc(`${origin}/robots.txt`);
  check(robotsRes.status === 200 && /^text\/plain/.test(header(robotsRes, "content-type") ?? ""), `robots.txt answered ${robotsRes.status}`);
  const robots = robotsRes.body.toString();
  const sitemapLines = [...robots.matchAll(/^sitemap:\s*(\S+)\s*$/gim)].map((m) => m[1]!);
  const indexUrl = sitemapLines.find((u) => u.endsWith("/sitemap.xml"));
  const feedUrl = sitemapLines.find((u) => u.endsWith(".atom"));
  check(indexUrl !== undefined, `robots.txt lists no sitemap index: ${robots}`);

  const index = await fetchDoc(indexUrl!, { "Accept-Encoding": "gzip" });
  check(index.status === 200, `index answered ${index.status}`);
  check(header(index, "content-encoding") === "gzip", "index not gzip-encoded on the wire");
  const indexXml = documentBytes(index);
  check(hasStylesheet(indexXml), "index lacks the xml-stylesheet PI");
  const indexErrors = await validator.check(indexXml, "siteindex");
  validated++;
  check(indexErrors.length === 0, `index invalid: ${indexErrors.join("; ")}`);
  const entries = await parseSitemapIndex(Readable.from([indexXml]), 50_000);
  const listed = [...indexXml.toString().matchAll(/<sitemap><loc>([^<]*)<\/loc>(?:<lastmod>([^<]*)<\/lastmod>)?/g)];
  const indexLastmod = new Map(listed.map((m) => [m[1]!.replaceAll("&amp;", "&"), m[2]]));
  check(entries.length === listed.length, "sitemap.js and the raw index disagree on the entries");

  // Documents are read two at a time: libxml2 validates in a worker thread while sitemap.js
  // parses the other document here, and the Worker serves meanwhile.
  const readDocument = async (url: string): Promise<CrawledDocument> => {
    const shard = SHARD.exec(new URL(url).pathname);
    const news = NEWS.exec(new URL(url).pathname);
    check(shard !== null || news !== null, `index lists ${url}, which is neither a shard nor a news sitemap`);
    const xmlUrl = url.replace(/\.gz$/, "");
    const encoded = await fetchDoc(xmlUrl, { "Accept-Encoding": "gzip" });
    const file = await fetchDoc(`${xmlUrl}.gz`);
    check(encoded.status === 200 && file.status === 200, `${url}: ${encoded.status}/${file.status}`);
    check(header(encoded, "content-encoding") === "gzip", `${url} not gzip-encoded on the wire`);
    check(header(file, "content-type") === "application/gzip" && header(file, "content-encoding") === undefined, `${xmlUrl}.gz is not a gzip file`);
    const xml = documentBytes(encoded);
    check(documentBytes(file).equals(xml), `${url}: .xml and .xml.gz differ`);
    check(hasStylesheet(xml), `${url} lacks the xml-stylesheet PI`);
    const [errors, items] = await Promise.all([validator.check(xml, "urlset"), parseSitemap(Readable.from([xml]))]);
    validated++;
    check(errors.length === 0, `${url} invalid: ${errors.join("; ")}`);
    const urls = items.map((i) => i.url);
    check(new Set(urls).size === urls.length, `${url} lists a URL twice`);
    return {
      url,
      kind: shard ? "shard" : "news",
      name: shard ? `${shard[1]}-${shard[2]}` : `news${news![1]}`,
      etag: header(encoded, "etag") ?? "",
      fileEtag: header(file, "etag") ?? "",
      lastModified: header(encoded, "last-modified") ?? "",
      indexLastmod: indexLastmod.get(url),
      urls,
      lastmods: lastmodsOf(items),
      sha256: sha256(xml),
    };
  };
  const documents: CrawledDocument[] = new Array(entries.length);
  let next = 0;
  const reader = async (): Promise<void> => {
    while (next < entries.length) {
      const i = next++;
      documents[i] = await readDocument(entries[i]!.url);
    }
  };
  await Promise.all([reader(), reader()]);

  let feed: AtomEntry[] | null = null;
  if (feedUrl) {
    const res = await fetchDoc(feedUrl, { "Accept-Encoding": "gzip" });
    check(
      res.status === 200 && /^application\/atom\+xml/.test(header(res, "content-type") ?? ""),
      `feed answered ${res.status} ${header(res, "content-type")}`,
    );
    feed = parseAtom(documentBytes(res).toString(), check);
    validated++; // parsed and checked as Atom
  }

  const shardDocs = documents.filter((d) => d.kind === "shard");
  return {
    requests,
    documentsValidated: validated,
    robots,
    sitemapLines,
    indexEtag: header(index, "etag") ?? "",
    documents,
    shardUrls: shardDocs.flatMap((d) => d.urls),
    newsUrls: documents.filter((d) => d.kind === "news").flatMap((d) => d.urls),
    feed,
  };
}
