/** The Hono app: request → site → route → manifest → source → render → compress. */
import { type Context, Hono } from "hono";
import { admin } from "./admin/app.ts";
import { ConfigError } from "./config.ts";
import { indexCacheTags, shardCacheTags } from "./cache/headers.ts";
import { requestManifest } from "./cache/manifest-cache.ts";
import { type ServeContext, serveDocument } from "./cache/serve.ts";
import { type ShardManifest, findShard, listedShards } from "./manifest/manifest.ts";
import { INDEX_PATH, parseSitemapPath, shardPath } from "./http/paths.ts";
import { notFound, plainError } from "./http/respond.ts";
import { indexSnapshotKey } from "./snapshots/store.ts";
import { robotsResponse } from "./http/robots.ts";
import { keyFileResponse } from "./notify/indexnow.ts";
import { registerFormatRoutes } from "./formats/routes.ts";
import { type Services, services } from "./services.ts";
import { indexExtras, indexMeta, renderIndex, renderShard } from "./sitemaps.ts";

export type AppEnv = { Bindings: Env; Variables: { services: Services; origin: string } };

export const app = new Hono<AppEnv>();

app.onError((err) => {
  if (err instanceof ConfigError) {
    console.error(err.message);
    return plainError(500, err.message);
  }
  console.error("unhandled error", err);
  return plainError(500, "500 Internal Server Error");
});

app.notFound(() => notFound("no such sitemap path"));

/**
 * Site resolution: the request URL's origin must be a configured site. The Host is what the edge
 * routed on; forwarding headers (X-Forwarded-Host, …) are never consulted, so a request can only
 * read its own site's data.
 */
app.use("*", async (c, next) => {
  const s = services(c.env);
  const origin = new URL(c.req.url).origin;
  if (!s.config.sites.has(origin)) return notFound("unknown site");
  c.set("services", s);
  c.set("origin", origin);
  await next();
});

app.route("/sitemap-admin", admin);

// robots.txt with the Sitemap: lines (docs/notify.md); the zone's second route.
app.get("/robots.txt", (c) =>
  robotsResponse(c.req.raw, { config: c.var.services.config, origin: c.var.origin, waitUntil: waitUntilOf(c) }),
);

// The IndexNow key file, in the root directory so it covers the whole host (before the shard and
// format routes; any other path, e.g. a text sitemap of a section "indexnow", falls through).
app.get("/:file{sitemap-indexnow-[a-zA-Z0-9-]+\\.txt}", async (c, next) => {
  const keyFile = keyFileResponse(c.var.services.config.notify.indexNow, new URL(c.req.url).pathname, c.req.method);
  if (keyFile) return keyFile;
  await next();
});

/** How sitemap documents are served (src/cache/serve.ts): this request, config, snapshots, after-work. */
function serveContext(c: Context<AppEnv>): ServeContext {
  return { request: c.req.raw, config: c.var.services.config, snapshots: c.var.services.snapshots, waitUntil: waitUntilOf(c) };
}

function waitUntilOf(c: Context<AppEnv>): (promise: Promise<unknown>) => void {
  try {
    const ctx = c.executionCtx;
    return (promise) => ctx.waitUntil(promise);
  } catch {
    return (promise) => void promise.catch(() => undefined); // no execution context (app.fetch without one)
  }
}

/** The site's manifest for this request: the location's cached copy when fresh (no D1 query). */
function manifestFor(c: Context<AppEnv>): Promise<ShardManifest> {
  const s = c.var.services;
  return requestManifest(s, c.var.origin, s.config.cache.manifestTtl, waitUntilOf(c));
}

app.get(INDEX_PATH, async (c) => {
  const s = c.var.services;
  const origin = c.var.origin;
  const manifest = await manifestFor(c);
  const shards = listedShards(manifest);
  if (shards.length === 0) return notFound("this site has no URLs yet");
  // News sitemaps (listed only while non-empty) and the feed: docs/extensions.md.
  const extras = await indexExtras(s, manifest);
  const meta = indexMeta(manifest, extras);
  // The cron's index snapshot is keyed by the index version; it serves only while that still holds.
  const snapshot = manifest.snapshot === indexSnapshotKey(origin, meta.version) ? manifest.snapshot : null;
  return serveDocument(serveContext(c), {
    origin,
    path: INDEX_PATH,
    file: "xml",
    ...meta,
    tags: indexCacheTags(origin),
    snapshot,
    render: () => renderIndex(s.config, manifest, extras),
  });
});

// News and text sitemaps, the Atom feed, the browser view's XSL (before the shard route).
registerFormatRoutes(app);

app.get("/:file{sitemap-.+}", async (c) => {
  const path = parseSitemapPath(new URL(c.req.url).pathname);
  if (path?.kind !== "shard") return notFound("no such sitemap path");
  const s = c.var.services;
  const origin = c.var.origin;
  const manifest = await manifestFor(c);
  const shard = findShard(manifest, path.section, path.n);
  if (!shard) return notFound(`no sitemap ${path.section}-${path.n}`);
  return serveDocument(serveContext(c), {
    origin,
    path: shardPath(shard.section, shard.n, path.file),
    file: path.file,
    version: shard.version,
    lastChange: shard.lastChange,
    tags: shardCacheTags(origin, shard.section, shard.n),
    snapshot: shard.snapshot ?? null,
    render: () => renderShard(s, origin, shard),
  });
});
