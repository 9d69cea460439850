/** A fetched sitemap's text → its items (records, or the sitemaps an index lists), streamed. */
import { type SitemapItem, SitemapXmlReader } from "../ingest/sitemap-xml.ts";
import { XmlError } from "../ingest/xml.ts";
import { SequenceDigest } from "./digest.ts";
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

/** An item as the content digest sees it: everything it says, not where it stands in the file (line numbers). */
export function entryText(item: SitemapItem): string {
  return item.kind === "record" ? JSON.stringify(["url", item.input, item.error ?? null]) : JSON.stringify(["sitemap", item.loc, item.error ?? null]);
}

/** A record item's loc as written (empty when it has none), for the digest of which URLs a part lists. */
export function locText(item: SitemapItem & { kind: "record" }): string {
  const loc = item.input["loc"];
  return typeof loc === "string" ? loc : "";
}

/** The content digest of a whole document, as a pass that reads it computes it (src/mirror/document.ts). */
export async function contentDigest(text: AsyncIterable<string>, url: string): Promise<string> {
  const digest = new SequenceDigest();
  for await (const item of sitemapItems(text, url)) await digest.add(entryText(item));
  return digest.value();
}
