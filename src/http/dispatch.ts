/**
 * The one route of sitemap documents: the request path parsed once (src/http/document-path.ts),
 * then one handler per kind. No route falls through to another.
 */
import { feedFile, newsFile, textFile, xslFile } from "../formats/routes.ts";
import { keyFileResponse } from "../notify/indexnow.ts";
import { factory } from "./app-env.ts";
import { parseDocumentPath } from "./document-path.ts";
import { notFound } from "./respond.ts";
import { indexDocument, shardDocument } from "./sitemap-documents.ts";

/** Every path under `/sitemap` the parser may accept (the rest, e.g. `/sitemap-admin/…`, is parsed to null). */
export const DOCUMENT_ROUTE = "/:document{sitemap.+}";

export const documentHandlers = factory.createHandlers((c) => {
  const pathname = new URL(c.req.url).pathname;
  const indexNow = c.var.services.config.notify.indexNow;
  const path = parseDocumentPath(pathname, indexNow?.key ?? null);
  switch (path?.kind) {
    case "index":
      return indexDocument(c);
    case "shard":
      return shardDocument(c, path.section, path.n, path.file);
    case "text":
      return textFile(c, path.section, path.n);
    case "news":
      return newsFile(c, path.n, path.file);
    case "feed":
      return feedFile(c);
    case "xsl":
      return xslFile(c);
    case "indexnow-key":
      // The key file sits in the root directory so that it covers the whole host.
      return keyFileResponse(indexNow, pathname, c.req.method) ?? notFound("no such sitemap path");
    case undefined:
      return notFound("no such sitemap path");
  }
});
