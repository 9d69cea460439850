/**
 * The one route of sitemap documents: the request path parsed once (src/http/document-path.ts),
 * then one handler per kind. No route falls through to another. A top-level browser navigation to
 * the index, a shard, a news sitemap or the feed gets the browser view (HTML, never cached;
 * docs/browser-view.md) instead; every other request gets the document, byte for byte.
 */

import { keyFileResponse } from "../notify/indexnow.ts";
import { factory } from "./app-env.ts";
import { parseDocumentPath } from "./document-path.ts";
import { feedFile, newsFile, textFile, xslFile } from "./formats.ts";
import { notFound } from "./respond.ts";
import { indexDocument, shardDocument } from "./sitemap-documents.ts";
import { feedView, indexView, newsView, shardView } from "./view.ts";

/** Every path under `/sitemap` the parser may accept (the rest, e.g. `/sitemap-admin/…`, is parsed to null). */
export const DOCUMENT_ROUTE = "/:document{sitemap.+}";

/**
 * A person opening the URL in a browser tab: browsers send `Sec-Fetch-Dest: document` and
 * `Sec-Fetch-Mode: navigate` on top-level navigations only; crawlers send no `Sec-Fetch-*`, and
 * scripts cannot set them. HEAD stays the document's (its headers are the XML's).
 */
function isBrowserNavigation(request: Request): boolean {
  const headers = request.headers;
  return request.method === "GET" && headers.get("sec-fetch-dest") === "document" && headers.get("sec-fetch-mode") === "navigate";
}

export const documentHandlers = factory.createHandlers((c) => {
  const pathname = new URL(c.req.url).pathname;
  const { notify, browserView } = c.var.services.config;
  const indexNow = notify.indexNow;
  const path = parseDocumentPath(pathname, indexNow?.key ?? null);
  // The `.xml.gz` files stay files (a download), the text sitemaps are readable as they are.
  const view = browserView && isBrowserNavigation(c.req.raw);
  switch (path?.kind) {
    case "index":
      return view ? indexView(c) : indexDocument(c);
    case "shard":
      return view && path.file === "xml" ? shardView(c, path.section, path.n) : shardDocument(c, path.section, path.n, path.file);
    case "text":
      return textFile(c, path.section, path.n);
    case "news":
      return view && path.file === "xml" ? newsView(c, path.n) : newsFile(c, path.n, path.file);
    case "feed":
      return view ? feedView(c) : feedFile(c);
    case "xsl":
      return xslFile(c);
    case "indexnow-key":
      // The key file sits in the root directory so that it covers the whole host.
      return keyFileResponse(indexNow, pathname, c.req.method) ?? notFound("no such sitemap path");
    case undefined:
      return notFound("no such sitemap path");
  }
});
