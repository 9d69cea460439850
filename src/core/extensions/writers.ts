/**
 * Extension element writers: normalised RecordExtensions in, markup out, children in XSD sequence
 * order. Every text and attribute value is escaped here, numbers and enumerations included:
 * records read from KV may have been written by another program, so no value is trusted to have
 * the type the validator would have given it.
 *
 * A namespace is declared once on `<urlset>` when the document's head knows it is used (the shard's
 * manifest entry says so). A record whose kinds the head did not declare (written after the
 * manifest was built) gets the declaration on each of its extension elements instead: the document
 * stays well-formed and valid either way.
 */
import { escapeXml } from "../escape.ts";
import { EXT_IMAGE, EXT_NEWS, EXT_VIDEO, EXT_XHTML, NAMESPACES } from "./kinds.ts";
import type { AlternateLink, ImageEntry, NewsEntry, RecordExtensions, VideoEntry } from "./types.ts";

const NS_ATTR: Record<number, string> = Object.fromEntries(NAMESPACES.map((n) => [n.bit, ` xmlns:${n.prefix}="${n.uri}"`]));

/** ` xmlns:image="…"` etc. for every kind in `kinds`, in a fixed order. */
export function namespaceDeclarations(kinds: number): string {
  let out = "";
  for (const ns of NAMESPACES) if (kinds & ns.bit) out += NS_ATTR[ns.bit];
  return out;
}

const yesNo = (b: boolean): string => (b ? "yes" : "no");
/** Any stored value as escaped text (a number from a hand-made entry may be a string, or markup). */
const txt = (value: unknown): string => escapeXml(String(value));
/** A space-separated list (a hand-made entry may hold a plain string instead of the array). */
const words = (list: unknown): string => txt(Array.isArray(list) ? list.join(" ") : list);
const el = (name: string, text: unknown): string => `<${name}>${txt(text)}</${name}>`;

function imageElement(image: ImageEntry, nsAttr = ""): string {
  let xml = `<image:image${nsAttr}><image:loc>${escapeXml(image.loc)}</image:loc>`;
  if (image.caption !== undefined) xml += el("image:caption", image.caption);
  if (image.geo_location !== undefined) xml += el("image:geo_location", image.geo_location);
  if (image.title !== undefined) xml += el("image:title", image.title);
  if (image.license !== undefined) xml += el("image:license", image.license);
  return `${xml}</image:image>`;
}

/** `<video:video>`, children in sitemap-video.xsd sequence order. */
export function videoElement(v: VideoEntry, nsAttr = ""): string {
  let xml = `<video:video${nsAttr}>`;
  xml += el("video:thumbnail_loc", v.thumbnail_loc);
  xml += el("video:title", v.title);
  xml += el("video:description", v.description);
  if (v.content_loc !== undefined) xml += el("video:content_loc", v.content_loc);
  if (v.player_loc !== undefined) xml += el("video:player_loc", v.player_loc);
  if (v.duration !== undefined) xml += el("video:duration", v.duration);
  if (v.expiration_date !== undefined) xml += el("video:expiration_date", v.expiration_date);
  if (v.rating !== undefined) xml += el("video:rating", typeof v.rating === "number" ? v.rating.toFixed(2).replace(/\.?0+$/, "") || "0" : v.rating);
  if (v.view_count !== undefined) xml += el("video:view_count", v.view_count);
  if (v.publication_date !== undefined) xml += el("video:publication_date", v.publication_date);
  if (v.tags) for (const tag of v.tags) xml += el("video:tag", tag);
  if (v.family_friendly !== undefined) xml += `<video:family_friendly>${yesNo(v.family_friendly)}</video:family_friendly>`;
  if (v.restriction) {
    xml += `<video:restriction relationship="${txt(v.restriction.relationship)}">${words(v.restriction.countries)}</video:restriction>`;
  }
  if (v.requires_subscription !== undefined) {
    xml += `<video:requires_subscription>${yesNo(v.requires_subscription)}</video:requires_subscription>`;
  }
  if (v.uploader) {
    const info = v.uploader.info !== undefined ? ` info="${escapeXml(v.uploader.info)}"` : "";
    xml += `<video:uploader${info}>${escapeXml(v.uploader.name)}</video:uploader>`;
  }
  if (v.platform) {
    xml += `<video:platform relationship="${txt(v.platform.relationship)}">${words(v.platform.platforms)}</video:platform>`;
  }
  if (v.live !== undefined) xml += `<video:live>${yesNo(v.live)}</video:live>`;
  return `${xml}</video:video>`;
}

/** `<news:news>`: publication(name, language), publication_date, title. */
function newsElement(news: NewsEntry, nsAttr = ""): string {
  return (
    `<news:news${nsAttr}><news:publication>${el("news:name", news.publication.name)}${el("news:language", news.publication.language)}` +
    `</news:publication>${el("news:publication_date", news.publication_date)}${el("news:title", news.title)}</news:news>`
  );
}

function alternateElement(link: AlternateLink, nsAttr = ""): string {
  return `<xhtml:link${nsAttr} rel="alternate" hreflang="${escapeXml(link.hreflang)}" href="${escapeXml(link.href)}"/>`;
}

/**
 * The extension elements of one `<url>` (they follow `<priority>`): images, videos, news, then
 * hreflang links, limited to the kinds in `include`. Kinds not in `declared` carry their own
 * namespace declaration.
 */
export function extensionElements(ext: RecordExtensions, include: number, declared: number): string {
  let xml = "";
  if (ext.images && include & EXT_IMAGE) {
    const ns = declared & EXT_IMAGE ? "" : NS_ATTR[EXT_IMAGE];
    for (const image of ext.images) xml += imageElement(image, ns);
  }
  if (ext.videos && include & EXT_VIDEO) {
    const ns = declared & EXT_VIDEO ? "" : NS_ATTR[EXT_VIDEO];
    for (const video of ext.videos) xml += videoElement(video, ns);
  }
  if (ext.news && include & EXT_NEWS) xml += newsElement(ext.news, declared & EXT_NEWS ? "" : NS_ATTR[EXT_NEWS]);
  if (ext.alternates && include & EXT_XHTML) {
    const ns = declared & EXT_XHTML ? "" : NS_ATTR[EXT_XHTML];
    for (const link of ext.alternates) xml += alternateElement(link, ns);
  }
  return xml;
}
