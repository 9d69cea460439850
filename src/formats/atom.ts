/**
 * Atom 1.0 (RFC 4287) feed of a site's most recently changed URLs, newest change first. Bounded
 * (FEED_SIZE entries, ≤ 1,000), so it is built as one string. Search engines read the URL from each
 * entry's `<link>` and the change time from `<updated>` (Google accepts Atom feeds as sitemaps).
 */
import { w3cSeconds } from "../core/datetime-format.ts";
import { escapeXml } from "../core/escape.ts";
import { Fingerprint } from "../core/fingerprint.ts";
import type { StoredRecord } from "../core/types.ts";
import { XML_DECLARATION } from "../core/writers.ts";

const ATOM_NS = "http://www.w3.org/2005/Atom";

/** Entry title: the article's or first video's title when there is one, else the URL itself. */
function entryTitle(record: StoredRecord): string {
  return record.ext?.news?.title ?? record.ext?.videos?.[0]?.title ?? record.loc;
}

export interface AtomFeedInput {
  origin: string;
  /** Absolute URL of the feed itself (its atom:id and rel="self" link). */
  selfUrl: string;
  /** Records, newest change first. */
  records: readonly StoredRecord[];
}

export function renderAtomFeed({ origin, selfUrl, records }: AtomFeedInput): string {
  const host = new URL(origin).host;
  const updated = records.reduce((max, r) => Math.max(max, r.updatedAt), 0);
  const parts: string[] = [
    XML_DECLARATION,
    `<feed xmlns="${ATOM_NS}">\n`,
    `<id>${escapeXml(selfUrl)}</id>\n`,
    `<title>Recently changed pages of ${escapeXml(host)}</title>\n`,
    `<updated>${w3cSeconds(updated)}</updated>\n`,
    `<link rel="self" type="application/atom+xml" href="${escapeXml(selfUrl)}"/>\n`,
    `<link rel="alternate" type="text/html" href="${escapeXml(origin)}/"/>\n`,
    `<author><name>${escapeXml(host)}</name></author>\n`,
    `<generator>edge-sitemaps</generator>\n`,
  ];
  for (const r of records) {
    const loc = escapeXml(r.loc);
    let entry = `<entry><id>${loc}</id><title>${escapeXml(entryTitle(r))}</title><updated>${w3cSeconds(r.updatedAt)}</updated>`;
    if (r.ext?.news) entry += `<published>${escapeXml(r.ext.news.publication_date)}</published>`;
    entry += `<link rel="alternate" href="${loc}"/></entry>\n`;
    parts.push(entry);
  }
  parts.push("</feed>\n");
  return parts.join("");
}

export function feedVersion(records: readonly StoredRecord[], size: number): string {
  const fp = new Fingerprint().addString("atom1").addNumber(size);
  for (const r of records) fp.addNumber(r.key).addNumber(r.updatedAt);
  return fp.digest();
}
