/**
 * Sitemap XML (urlset or sitemap index) and feeds (RSS, Atom: feed-xml.ts) → record inputs,
 * streamed; the root element decides which. Each `<url>` (`<sitemap>`, `<item>`, `<entry>`) is
 * assembled as a small tree from XML events, then mapped to the record shape the core validator
 * takes (extension fields use its snake_case names). Only one entry is ever in memory, and its
 * size is capped (elements, characters per element, characters per entry).
 *
 * Elements the record model has no field for (e.g. `<video:price>`, `<news:keywords>`, the
 * retired `mobile:`, `geo:` and code-search extensions, unknown namespaces) are not imported:
 * each is reported through `dropped`, never silently lost.
 */
import { ATOM_03_NS, ATOM_10_NS, mapAtomEntry, mapRssItem, resolveBase } from "./feed-xml.ts";
import { XmlError, type XmlEvent, XmlEvents } from "./xml.ts";
import type { DroppedHandler, XmlNode as Node } from "./xml-node.ts";

const SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9";
const IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1";
const VIDEO_NS = "http://www.google.com/schemas/sitemap-video/1.1";
const NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9";
const XHTML_NS = "http://www.w3.org/1999/xhtml";

const PREFIXES: ReadonlyMap<string, string> = new Map([
  [IMAGE_NS, "image"],
  [VIDEO_NS, "video"],
  [NEWS_NS, "news"],
  [XHTML_NS, "xhtml"],
  // Extensions Google retired: still in old sitemaps, never imported.
  ["http://www.google.com/schemas/sitemap-mobile/1.0", "mobile"],
  ["http://www.google.com/geo/schemas/sitemap/1.0", "geo"],
  ["http://www.google.com/codesearch/schemas/sitemap/1.0", "codesearch"],
  ["http://www.google.com/schemas/sitemap-pagemap/1.0", "pagemap"],
]);

/** The root elements read, by what they are. */
export type RootKind = "urlset" | "sitemapindex" | "rss" | "atom";
const RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
/** The elements of a feed entry a record is made of (feed-xml.ts). */
const FEED_FIELDS: ReadonlySet<string> = new Set(["link", "guid", "pubDate", "date", "updated", "modified", "published", "issued"]);

/** A urlset entry, or an index entry pointing at another sitemap. */
export type SitemapItem =
  | { kind: "record"; line: number; input: Record<string, unknown>; error?: string }
  | { kind: "sitemap"; line: number; loc: string; error?: string };

/** Largest number of elements in one `<url>` entry (1,000 images × 5 children fit easily). */
const MAX_NODES_PER_ENTRY = 20_000;
/** Most characters of text in one element (the XML reader also caps each text node at 1 MiB). */
const MAX_NODE_CHARS = 1 << 20;
/**
 * Most characters of text and attribute values in one entry: 1,000 images with the longest loc,
 * caption and title fit; a hostile entry of many 1 MiB text nodes or tags stops here instead of
 * growing without end.
 */
const MAX_ENTRY_CHARS = 8 << 20;

export class SitemapXmlReader {
  readonly #xml = new XmlEvents();
  readonly #dropped: DroppedHandler;
  /** Where relative feed links resolve from (the feed's URL), when known. */
  readonly #base: string | undefined;
  #root: RootKind | null = null;
  #rootNs = "";
  #rootBase: string | undefined;
  /** Inside RSS 2.0's `<channel>`, whose `<item>`s are the entries. */
  #inChannel = false;
  #stack: Node[] = [];
  #nodes = 0;
  #chars = 0;
  #error: string | undefined;
  #items: SitemapItem[] = [];

  constructor(dropped: DroppedHandler, base?: string) {
    this.#dropped = dropped;
    this.#base = base;
  }

  get kind(): RootKind | null {
    return this.#root;
  }

  get line(): number {
    return this.#xml.line;
  }

  feed(text: string): SitemapItem[] {
    this.#handle(this.#xml.feed(text));
    return this.#take();
  }

  end(): SitemapItem[] {
    this.#handle(this.#xml.end());
    return this.#take();
  }

  #take(): SitemapItem[] {
    const items = this.#items;
    this.#items = [];
    return items;
  }

  #handle(events: XmlEvent[]): void {
    for (const e of events) {
      if (e.kind === "start") {
        if (this.#root === null) {
          this.#startRoot(e.ns, e.local, e.attrs, e.line);
          continue;
        }
        if (this.#root === "rss" && this.#stack.length === 0 && !this.#inChannel && e.local === "channel") {
          this.#inChannel = true;
          continue;
        }
        if (e.error !== undefined) this.#error ??= e.error;
        const node: Node = { ns: e.ns, local: e.local, attrs: e.attrs, line: e.line, text: "", children: [] };
        if (e.error !== undefined) node.error = e.error;
        // Attributes are kept with the entry too: up to 1 MiB per tag, so they count.
        for (const [name, value] of e.attrs) this.#chars += name.length + value.length;
        this.#checkEntrySize(e.line);
        if (++this.#nodes > MAX_NODES_PER_ENTRY)
          throw new XmlError(e.line, `more than ${MAX_NODES_PER_ENTRY} elements in the entry starting at line ${this.#entryLine(e.line)}`);
        this.#stack[this.#stack.length - 1]?.children.push(node);
        this.#stack.push(node);
      } else if (e.kind === "text") {
        const top = this.#stack[this.#stack.length - 1];
        if (e.error !== undefined) this.#error ??= e.error;
        if (top === undefined) continue;
        if (e.error !== undefined) top.error ??= e.error;
        this.#chars += e.text.length;
        if (top.text.length + e.text.length > MAX_NODE_CHARS) {
          throw new XmlError(e.line, `<${top.local}> (line ${top.line}) holds more than ${MAX_NODE_CHARS} characters of text`);
        }
        this.#checkEntrySize(e.line);
        top.text += e.text;
      } else {
        const node = this.#stack.pop();
        if (node === undefined) {
          // The end of RSS's <channel>, or of the root.
          this.#inChannel = false;
          continue;
        }
        if (this.#stack.length === 0) this.#entry(node);
      }
    }
  }

  #entryLine(fallback: number): number {
    return this.#stack[0]?.line ?? fallback;
  }

  #checkEntrySize(line: number): void {
    if (this.#chars > MAX_ENTRY_CHARS) {
      throw new XmlError(line, `the entry starting at line ${this.#entryLine(line)} holds more than ${MAX_ENTRY_CHARS} characters of text and attributes`);
    }
  }

  #startRoot(ns: string, local: string, attrs: Map<string, string>, line: number): void {
    this.#rootNs = ns;
    if (local === "rss" || (local === "RDF" && ns === RDF_NS)) {
      this.#root = "rss";
    } else if (local === "feed" && (ns === ATOM_10_NS || ns === ATOM_03_NS || ns === "")) {
      this.#root = "atom";
      this.#rootBase = resolveBase({ attrs }, this.#base);
    } else if (local === "urlset" || local === "sitemapindex") {
      this.#root = local;
      if (ns !== SITEMAP_NS) this.#dropped(`xmlns="${ns}" on <${local}> (expected ${SITEMAP_NS}; read anyway)`, line);
    } else {
      throw new XmlError(line, `<${local}> is not a sitemap or a feed: the root element must be <urlset>, <sitemapindex>, <rss> or an Atom <feed>`);
    }
  }

  #entry(node: Node): void {
    const error = this.#error;
    this.#error = undefined;
    this.#nodes = 0;
    this.#chars = 0;
    if (this.#root === "rss" || this.#root === "atom") {
      this.#feedEntry(node);
      return;
    }
    const expected = this.#root === "urlset" ? "url" : "sitemap";
    if (node.ns !== this.#rootNs || node.local !== expected) {
      this.#dropped(displayName(node, this.#rootNs), node.line);
      return;
    }
    if (this.#root === "sitemapindex") {
      const loc = node.children.find((c) => c.ns === this.#rootNs && c.local === "loc");
      const item: SitemapItem = { kind: "sitemap", line: node.line, loc: loc?.text.trim() ?? "" };
      const problem = error ?? (loc === undefined || item.loc === "" ? "<sitemap> has no <loc>" : undefined);
      if (problem !== undefined) item.error = problem;
      this.#items.push(item);
      return;
    }
    const mapped = mapUrl(node, this.#rootNs, this.#dropped);
    const item: SitemapItem = { kind: "record", line: node.line, input: mapped.input };
    const problem = error ?? mapped.error;
    if (problem !== undefined) item.error = problem;
    this.#items.push(item);
  }

  /** A feed's `<item>` / `<entry>` → a record item; anything else of a feed is metadata, ignored. */
  #feedEntry(node: Node): void {
    const rss = this.#root === "rss";
    if (node.local !== (rss ? "item" : "entry") || (!rss && node.ns !== this.#rootNs)) return;
    const input = rss ? mapRssItem(node, this.#base, this.#dropped) : mapAtomEntry(node, this.#rootBase, this.#dropped);
    if (input === undefined) return;
    const item: SitemapItem = { kind: "record", line: node.line, input };
    // A bad reference matters only where the record comes from (not in a description, say).
    const error = [node, ...node.children].find((n) => n.error !== undefined && (n === node || FEED_FIELDS.has(n.local)))?.error;
    if (error !== undefined) item.error = error;
    this.#items.push(item);
  }
}

function displayName(node: Node, rootNs: string): string {
  if (node.ns === rootNs) return `<${node.local}>`;
  const prefix = PREFIXES.get(node.ns);
  return prefix ? `<${prefix}:${node.local}>` : `<${node.local}> in namespace ${node.ns || "(none)"}`;
}

const CORE_FIELDS: ReadonlySet<string> = new Set(["loc", "lastmod", "changefreq", "priority"]);
const IMAGE_FIELDS: ReadonlySet<string> = new Set(["loc", "caption", "geo_location", "title", "license"]);
const VIDEO_TEXT_FIELDS: ReadonlySet<string> = new Set([
  "thumbnail_loc",
  "title",
  "description",
  "content_loc",
  "player_loc",
  "duration",
  "expiration_date",
  "view_count",
  "publication_date",
  "family_friendly",
  "requires_subscription",
  "live",
]);

/** A `<url>` tree → record input. `error` when the entry itself is malformed (e.g. two `<loc>`). */
function mapUrl(node: Node, rootNs: string, dropped: DroppedHandler): { input: Record<string, unknown>; error?: string } {
  const input: Record<string, unknown> = {};
  let error: string | undefined;
  const images: Record<string, unknown>[] = [];
  const videos: Record<string, unknown>[] = [];
  const alternates: Record<string, unknown>[] = [];
  for (const child of node.children) {
    if (child.ns === rootNs && CORE_FIELDS.has(child.local)) {
      if (child.local in input) error ??= `<url> has more than one <${child.local}> (line ${child.line})`;
      input[child.local] = child.text.trim();
    } else if (child.ns === IMAGE_NS && child.local === "image") {
      images.push(mapFields(child, IMAGE_FIELDS, dropped));
    } else if (child.ns === VIDEO_NS && child.local === "video") {
      videos.push(mapVideo(child, dropped));
    } else if (child.ns === NEWS_NS && child.local === "news") {
      if ("news" in input) error ??= `<url> has more than one <news:news> (line ${child.line})`;
      input["news"] = mapNews(child, dropped);
    } else if (child.ns === XHTML_NS && child.local === "link" && child.attrs.get("rel") === "alternate") {
      alternates.push({ hreflang: child.attrs.get("hreflang") ?? "", href: child.attrs.get("href") ?? "" });
    } else {
      dropped(displayName(child, rootNs), child.line);
    }
  }
  if (images.length > 0) input["images"] = images;
  if (videos.length > 0) input["videos"] = videos;
  if (alternates.length > 0) input["alternates"] = alternates;
  return error === undefined ? { input } : { input, error };
}

function mapFields(node: Node, fields: ReadonlySet<string>, dropped: DroppedHandler): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const child of node.children) {
    if (child.ns === node.ns && fields.has(child.local)) out[child.local] = child.text.trim();
    else dropped(displayName(child, ""), child.line);
  }
  return out;
}

function mapVideo(node: Node, dropped: DroppedHandler): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const tags: string[] = [];
  for (const child of node.children) {
    const text = child.text.trim();
    if (child.ns !== VIDEO_NS) dropped(displayName(child, ""), child.line);
    else if (VIDEO_TEXT_FIELDS.has(child.local)) out[child.local] = text;
    else if (child.local === "rating") out["rating"] = /^\d+(\.\d+)?$/.test(text) ? Number(text) : text;
    else if (child.local === "tag") tags.push(text);
    else if (child.local === "restriction") out["restriction"] = { relationship: child.attrs.get("relationship") ?? "", countries: text };
    else if (child.local === "platform") out["platform"] = { relationship: child.attrs.get("relationship") ?? "", platforms: text };
    else if (child.local === "uploader") {
      const info = child.attrs.get("info");
      out["uploader"] = info === undefined ? { name: text } : { name: text, info };
    } else dropped(displayName(child, ""), child.line);
  }
  if (tags.length > 0) out["tags"] = tags;
  return out;
}

function mapNews(node: Node, dropped: DroppedHandler): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const child of node.children) {
    if (child.ns !== NEWS_NS) dropped(displayName(child, ""), child.line);
    else if (child.local === "publication") out["publication"] = mapFields(child, new Set(["name", "language"]), dropped);
    else if (child.local === "publication_date" || child.local === "title") out[child.local] = child.text.trim();
    else dropped(displayName(child, ""), child.line);
  }
  return out;
}
