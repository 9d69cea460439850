/**
 * GET /sitemap-admin/openapi.json: the OpenAPI 3.1 document generated from the route definitions
 * (src/admin/routes.ts) registered on the admin app, with the limits in force.
 */
import { OpenAPIHono, type RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env.ts";
import { jsonResponse } from "./json.ts";
import type { getOpenApi } from "./routes.ts";
import { limits } from "./urls.ts";

/** Where the app mounts the admin API (src/app.ts): the document's paths start with it. */
const ADMIN_BASE = "/sitemap-admin";

export function openApiHandler(admin: OpenAPIHono<AppEnv>): RouteHandler<typeof getOpenApi, AppEnv> {
  let mounted: OpenAPIHono | null = null;
  return (c) => {
    // Mounting copies the admin app's route definitions under the base path, once.
    mounted ??= new OpenAPIHono().route(ADMIN_BASE, admin);
    const { maxRecords, maxBytes } = limits(c);
    const document = mounted.getOpenAPI31Document({
      openapi: "3.1.0",
      info: {
        title: "edge-sitemaps admin API",
        version: "1",
        description: `Limits in force: at most ${maxRecords} records and ${maxBytes} bytes per request (ADMIN_MAX_RECORDS, ADMIN_MAX_BYTES).`,
      },
      security: [{ bearer: [] }],
    });
    return jsonResponse(document, 200);
  };
}
