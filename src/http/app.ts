/** The Hono app: request → site → route → manifest → source → render → compress. */
import { admin } from "../admin/app.ts";
import { factory } from "./app-env.ts";
import { DOCUMENT_ROUTE, documentHandlers } from "./dispatch.ts";
import { onError, onNotFound } from "./errors.ts";
import { resolveSite } from "./middleware/site.ts";
import { waitUntilOf } from "./request-context.ts";
import { robotsResponse } from "./robots.ts";

export const app = factory.createApp();

app.onError(onError);
app.notFound(onNotFound);
app.use("*", resolveSite);

app.route("/sitemap-admin", admin);

// robots.txt with the Sitemap: lines (docs/notify.md); the zone's second route.
app.get("/robots.txt", (c) => robotsResponse(c.req.raw, { config: c.var.services.config, origin: c.var.origin, waitUntil: waitUntilOf(c) }));

// The index, shards, other formats, the stylesheet and the IndexNow key file (src/http/dispatch.ts).
app.get(DOCUMENT_ROUTE, ...documentHandlers);
