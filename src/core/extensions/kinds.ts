/**
 * Extension kinds as bits, their XML namespaces, and which kinds a record carries. The same bits
 * are computed in SQL by migrations/0004 (column `urls.ext_kinds`), so a shard's manifest entry
 * knows which namespaces its head must declare.
 */
import type { RecordExtensions } from "./types.ts";

export const EXT_IMAGE = 1;
export const EXT_VIDEO = 2;
export const EXT_NEWS = 4;
export const EXT_XHTML = 8;
export const EXT_ALL = EXT_IMAGE | EXT_VIDEO | EXT_NEWS | EXT_XHTML;

export interface Namespace {
  bit: number;
  prefix: string;
  uri: string;
}

/** In the order the writers emit elements: image, video, news, xhtml. */
export const NAMESPACES: readonly Namespace[] = [
  { bit: EXT_IMAGE, prefix: "image", uri: "http://www.google.com/schemas/sitemap-image/1.1" },
  { bit: EXT_VIDEO, prefix: "video", uri: "http://www.google.com/schemas/sitemap-video/1.1" },
  { bit: EXT_NEWS, prefix: "news", uri: "http://www.google.com/schemas/sitemap-news/0.9" },
  { bit: EXT_XHTML, prefix: "xhtml", uri: "http://www.w3.org/1999/xhtml" },
];

/** Which extension kinds a record carries (the bits of the non-empty fields). */
export function extKindsOf(ext: RecordExtensions | null | undefined): number {
  if (!ext) return 0;
  let kinds = 0;
  if (ext.images && ext.images.length > 0) kinds |= EXT_IMAGE;
  if (ext.videos && ext.videos.length > 0) kinds |= EXT_VIDEO;
  if (ext.news) kinds |= EXT_NEWS;
  if (ext.alternates && ext.alternates.length > 0) kinds |= EXT_XHTML;
  return kinds;
}
