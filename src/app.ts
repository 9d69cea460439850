/** The Hono app: request → site → route → manifest → source → render → compress. */
import { Hono } from "hono";
import { admin } from "./admin/app.ts";
import { ConfigError } from "./config.ts";
import { findShard, listedShards } from "./manifest/manifest.ts";
import { parseSitemapPath } from "./http/paths.ts";
import { notFound, plainError, sitemapResponse } from "./http/respond.ts";
import { type Services, services } from "./services.ts";
import { currentManifest, renderIndex, renderShard } from "./sitemaps.ts";

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

app.get("/sitemap.xml", async (c) => {
  const s = c.var.services;
  const manifest = await currentManifest(s, c.var.origin);
  const shards = listedShards(manifest);
  if (shards.length === 0) return notFound("this site has no URLs yet");
  const lastChange = shards.reduce((max, shard) => Math.max(max, shard.lastChange), 0);
  return sitemapResponse(c.req.raw, { version: manifest.version, lastChange, file: "xml" }, () => renderIndex(s.config, manifest));
});

app.get("/:file{sitemap-.+}", async (c) => {
  const path = parseSitemapPath(new URL(c.req.url).pathname);
  if (path?.kind !== "shard") return notFound("no such sitemap path");
  const s = c.var.services;
  const manifest = await currentManifest(s, c.var.origin);
  const shard = findShard(manifest, path.section, path.n);
  if (!shard) return notFound(`no sitemap ${path.section}-${path.n}`);
  return sitemapResponse(c.req.raw, { version: shard.version, lastChange: shard.lastChange, file: path.file }, () =>
    renderShard(s, c.var.origin, shard),
  );
});
