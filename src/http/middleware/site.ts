/**
 * Site resolution: the request URL's origin must be a configured site, by the variables or the
 * registry (src/registry/, no D1 query once the isolate holds the registry's list). The Host is what the edge
 * routed on; forwarding headers (X-Forwarded-Host, …) are never consulted, so a request can only
 * read its own site's data. Sets `services` and `origin` for everything after it.
 */
import { siteServices } from "../../services.ts";
import { factory } from "../app-env.ts";
import { waitUntilOf } from "../request-context.ts";
import { notFound } from "../respond.ts";

export const resolveSite = factory.createMiddleware(async (c, next) => {
  const origin = new URL(c.req.url).origin;
  // A site of SITES (its own D1 database: SITE_DATABASES), else a registered one (docs/tenants.md).
  // A write never acts on a stale list of registered sites: a site deleted elsewhere takes none (docs/tenants.md).
  const writes = c.req.method !== "GET" && c.req.method !== "HEAD";
  const s = await siteServices(c.env, origin, waitUntilOf(c), writes);
  if (!s?.config.sites.has(origin)) return notFound("unknown site");
  c.set("services", s);
  c.set("origin", origin);
  await next();
});
