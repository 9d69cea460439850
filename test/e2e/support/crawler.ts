/**
 * A crawler's view: raw HTTP on loopback (node:http never decodes, so the wire bytes are seen),
 * sitemap.js's parsers as the third-party client, libxml2 for schema validity.
 */
import { Readable } from "node:stream";
import { gunzipSync } from "node:zlib";
import { parseSitemap, parseSitemapIndex } from "sitemap";
import { rawGet, type RawResponse } from "../../node/support/worker.ts";
import { validateXml } from "../../node/support/xsd.ts";

export interface CrawlStats {
  requests: number;
  documentsValidated: number;
  urls: string[];
  shardUrls: string[];
}

export function decodeBody(res: RawResponse): Buffer {
  return res.headers["content-encoding"] === "gzip" ? gunzipSync(res.body) : res.body;
}

/** Fetches `url` on the dev server's port with the site's Host header. */
export function fetchAs(port: number, url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const target = new URL(url);
  return rawGet(`http://127.0.0.1:${port}${target.pathname}${target.search}`, headers, target.host);
}

/** Crawls an index and every shard it lists, checking each on the wire and against the XSDs. */
export async function crawl(port: number, indexUrl: string, check: (condition: boolean, message: string) => void): Promise<CrawlStats> {
  const stats: CrawlStats = { requests: 0, documentsValidated: 0, urls: [], shardUrls: [] };
  const index = await fetchAs(port, indexUrl, { "Accept-Encoding": "gzip" });
  stats.requests++;
  check(index.status === 200, `index ${indexUrl} answered ${index.status}`);
  check(index.headers["content-encoding"] === "gzip", "index not gzip-encoded on the wire");
  const indexXml = decodeBody(index);
  const indexValid = await validateXml(indexXml, "siteindex");
  check(indexValid.valid, `index invalid: ${indexValid.errors.join("; ")}`);
  stats.documentsValidated++;
  const entries = await parseSitemapIndex(Readable.from([indexXml]), 50_000);
  stats.shardUrls = entries.map((e) => e.url);

  for (const shardUrl of stats.shardUrls) {
    const encoded = await fetchAs(port, shardUrl, { "Accept-Encoding": "gzip" });
    const file = await fetchAs(port, shardUrl.endsWith(".gz") ? shardUrl : `${shardUrl}.gz`);
    stats.requests += 2;
    check(encoded.status === 200 && file.status === 200, `${shardUrl}: ${encoded.status}/${file.status}`);
    check(encoded.headers["content-encoding"] === "gzip", `${shardUrl} not gzip-encoded on the wire`);
    check(file.headers["content-type"] === "application/gzip" && file.headers["content-encoding"] === undefined, `${shardUrl}.gz is not a gzip file`);
    const xml = gunzipSync(encoded.body);
    check(gunzipSync(file.body).equals(xml), `${shardUrl}: .xml and .xml.gz differ`);
    const valid = await validateXml(xml, "urlset");
    check(valid.valid, `${shardUrl} invalid: ${valid.errors.slice(0, 3).join("; ")}`);
    stats.documentsValidated++;
    const items = await parseSitemap(Readable.from([xml]));
    stats.urls.push(...items.map((i) => i.url));
  }
  return stats;
}
