/**
 * Site resolution: the request URL's origin must be a configured site. The Host is what the edge
 * routed on; forwarding headers (X-Forwarded-Host, …) are never consulted, so a request can only
 * read its own site's data. Sets `services` and `origin` for everything after it.
 */
import { servicesFor } from "../../services.ts";
import { factory } from "../app-env.ts";
import { notFound } from "../respond.ts";

export const resolveSite = factory.createMiddleware(async (c, next) => {
  const origin = new URL(c.req.url).origin;
  const s = servicesFor(c.env, origin); // the site's own D1 database (SITE_DATABASES)
  if (!s.config.sites.has(origin)) return notFound("unknown site");
  c.set("services", s);
  c.set("origin", origin);
  await next();
});
