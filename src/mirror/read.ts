/** A fetched sitemap's text → its items (records, or the sitemaps an index lists), streamed. */
import { type SitemapItem, SitemapXmlReader } from "../ingest/sitemap-xml.ts";
import { XmlError } from "../ingest/xml.ts";
import { MirrorFailure, shownUrl } from "./failure.ts";

export async function* sitemapItems(text: AsyncIterable<string>, url: string): AsyncGenerator<SitemapItem> {
  // Parts the record model has no field for are not mirrored; the import CLI reports them, a mirror only drops them.
  const reader = new SitemapXmlReader(() => undefined, url);
  try {
    for await (const chunk of text) yield* reader.feed(chunk);
    yield* reader.end();
  } catch (err) {
    if (err instanceof XmlError) throw new MirrorFailure(`${shownUrl(url)} is not a readable sitemap: ${err.message}`);
    throw err;
  }
}
