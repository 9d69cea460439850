/**
 * Feeds as sitemaps (engines accept RSS 2.0 and Atom 0.3 / 1.0 feeds in place of a sitemap):
 * an RSS `<item>` or an Atom `<entry>` becomes a record input with its link as `loc` and its date
 * as `lastmod`. Everything else of a feed (titles, descriptions, authors) has no place in a
 * sitemap and is ignored. An entry without a usable link, or with a date that is not one, is
 * reported through `dropped`, never fatal.
 */
import type { DroppedHandler, XmlNode } from "./xml-node.ts";

export const ATOM_10_NS = "http://www.w3.org/2005/Atom";
export const ATOM_03_NS = "http://purl.org/atom/ns#";
const DC_NS = "http://purl.org/dc/elements/1.1/";

const isHttp = (href: string): boolean => /^https?:\/\/[^/?#]/i.test(href);

/** `href` against `base` (xml:base or the feed's URL); undefined when no absolute http(s) URL comes out. */
function absolute(href: string, base: string | undefined): string | undefined {
  if (isHttp(href)) return href;
  if (href === "" || base === undefined || !isHttp(base)) return undefined;
  try {
    const url = new URL(href, base).href;
    return isHttp(url) ? url : undefined;
  } catch {
    return undefined;
  }
}

/** A feed date (RFC 822 in RSS, RFC 3339 / W3C in Atom and Dublin Core) as a W3C datetime in UTC. */
function feedDate(raw: string): string | undefined {
  const text = raw.trim();
  // Date-only values stay date-only: no time zone shifts the day.
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return text;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return undefined;
  const iso = new Date(ms).toISOString();
  return /^\d{4}-/.test(iso) ? iso.replace(/\.000Z$/, "Z") : undefined;
}

/** The record input of a feed entry, or undefined (reported) when it has no usable link. */
function toInput(
  node: XmlNode,
  loc: string | undefined,
  date: XmlNode | undefined,
  dropped: DroppedHandler,
  name: string,
): Record<string, unknown> | undefined {
  if (loc === undefined) {
    dropped(`<${name}> without a usable link`, node.line, "a sitemap entry needs an absolute http(s) URL");
    return undefined;
  }
  const input: Record<string, unknown> = { loc };
  if (date !== undefined) {
    const lastmod = feedDate(date.text);
    if (lastmod !== undefined) input["lastmod"] = lastmod;
    else dropped(`<${date.local}> that is not a date`, date.line, "the URL was kept without lastmod");
  }
  return input;
}

/**
 * RSS 2.0 (and 0.9x, 1.0) `<item>`: `<link>`, else a `<guid>` that is a permalink; `<pubDate>`
 * (or Dublin Core `<dc:date>`) → lastmod.
 */
export function mapRssItem(node: XmlNode, base: string | undefined, dropped: DroppedHandler): Record<string, unknown> | undefined {
  const own = (local: string) => node.children.find((c) => c.local === local && c.ns === node.ns);
  const link = own("link")?.text.trim();
  const guid = own("guid");
  let loc = link ? absolute(link, base) : undefined;
  if (loc === undefined && guid !== undefined && guid.attrs.get("isPermaLink") !== "false") loc = absolute(guid.text.trim(), undefined);
  const date = own("pubDate") ?? node.children.find((c) => c.ns === DC_NS && c.local === "date");
  return toInput(node, loc, date, dropped, "item");
}

/**
 * Atom `<entry>`: the alternate `<link href>` (rel absent or "alternate"; an HTML one preferred),
 * resolved against xml:base; `<updated>` (1.0), `<modified>` (0.3), else `<published>` /
 * `<issued>` → lastmod.
 */
export function mapAtomEntry(node: XmlNode, base: string | undefined, dropped: DroppedHandler): Record<string, unknown> | undefined {
  const entryBase = resolveBase(node, base);
  const links = node.children.filter((c) => c.ns === node.ns && c.local === "link" && (c.attrs.get("rel") ?? "alternate") === "alternate");
  const link = links.find((l) => /html/i.test(l.attrs.get("type") ?? "text/html")) ?? links[0];
  const loc = link === undefined ? undefined : absolute((link.attrs.get("href") ?? "").trim(), resolveBase(link, entryBase));
  const own = (local: string) => node.children.find((c) => c.local === local && c.ns === node.ns);
  const date = own("updated") ?? own("modified") ?? own("published") ?? own("issued");
  return toInput(node, loc, date, dropped, "entry");
}

/** The base URL in effect inside `node`: its xml:base against the outer one. */
export function resolveBase(node: Pick<XmlNode, "attrs">, outer: string | undefined): string | undefined {
  const own = node.attrs.get("xml:base");
  if (own === undefined) return outer;
  return absolute(own.trim(), outer) ?? outer;
}
