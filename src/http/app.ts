/** The Hono app: request → site → route → manifest → source → render → compress. */
import { admin } from "../admin/app.ts";
import { adminPages } from "../admin/dashboard/routes.ts";
import { factory } from "./app-env.ts";
import { logCrawlerFetches } from "./crawlers/log-fetches.ts";
import { DOCUMENT_ROUTE, documentHandlers } from "./dispatch.ts";
import { onError, onNotFound } from "./errors.ts";
import { resolveSite } from "./middleware/site.ts";
import { robotsRoute } from "./robots/route.ts";

export const app = factory.createApp();

app.onError(onError);
app.notFound(onNotFound);

// What crawlers fetched (docs/crawlers.md): recorded after the answer, never changing it.
app.use("/robots.txt", logCrawlerFetches);

// robots.txt with the Sitemap: lines (docs/notify.md); the zone's second route. Before the site
// middleware: it resolves the site itself and passes the origin's file through on any error of ours.
app.get("/robots.txt", robotsRoute);

app.use("*", resolveSite);
app.use(DOCUMENT_ROUTE, logCrawlerFetches);

// The dashboard and its sign-in pages first: they are not API routes (docs/dashboard.md).
app.route("/sitemap-admin", adminPages);
app.route("/sitemap-admin", admin);

// The index, shards, other formats, the stylesheet and the IndexNow key file (src/http/dispatch.ts).
app.get(DOCUMENT_ROUTE, ...documentHandlers);
