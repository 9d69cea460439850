/**
 * GET /sitemap-admin/openapi.json: the OpenAPI 3.1 document generated from the route definitions
 * (src/admin/routes.ts) registered on the admin app, with the limits in force.
 */
import type { OpenAPIHono, RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env.ts";
import { jsonResponse } from "./json.ts";
import { getOpenApi } from "./routes.ts";

export function openApiHandler(admin: OpenAPIHono<AppEnv>): RouteHandler<typeof getOpenApi, AppEnv> {
  return (c) => {
    // The admin app's paths are relative to where the app mounts it: this route's own path tells where.
    const base = c.req.routePath.slice(0, -getOpenApi.path.length);
    const { config } = c.var.services;
    const off = config.disabled.find((d) => d.feature === "admin-ingest");
    const limitsInForce = off
      ? `Ingest is off: ${off.variable} ${off.rule}.`
      : `Limits in force: at most ${config.adminMaxRecords} records and ${config.adminMaxBytes} bytes per request (ADMIN_MAX_RECORDS, ADMIN_MAX_BYTES).`;
    const document = admin.getOpenAPI31Document({
      openapi: "3.1.0",
      info: {
        title: "edge-sitemaps admin API",
        version: "1",
        description: limitsInForce,
      },
      security: [{ bearer: [] }],
    });
    const paths = Object.fromEntries(Object.entries(document.paths ?? {}).map(([path, item]) => [`${base}${path}`, item]));
    return jsonResponse({ ...document, paths }, 200);
  };
}
