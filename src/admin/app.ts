/**
 * The admin API under `/sitemap-admin/`: signed in (src/admin/auth.ts), every write audited
 * (src/admin/audit.ts); 404 when neither a token nor Access is configured.
 * Routes and their OpenAPI description come from one definition (src/admin/routes.ts).
 *
 * Errors are thrown as HTTPExceptions (AdminError) and rendered by the app's onError: a sub-app
 * without an onError of its own adds its handlers to the parent unwrapped, so the parent's
 * onError sees everything thrown here.
 */
import { OpenAPIHono, type RouteConfig, type RouteHandler } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { z } from "zod";
import { RecordInputSchema } from "../core/record/schema.ts";
import type { AppEnv } from "../http/app-env.ts";
import { auditWrites } from "./audit.ts";
import { siteRateLimit } from "./auth/site-limiter.ts";
import { adminAuth, adminEnabled } from "./auth.ts";
import { dashboardActionAnswer } from "./dashboard/action-answer.ts";
import { AdminError } from "./errors.ts";
import { openApiHandler } from "./openapi.ts";
import { regenerate } from "./regenerate.ts";
import {
  type RouteAccess,
  deleteSite,
  deleteSync,
  deleteUrls,
  getOpenApi,
  getSite,
  getStatus,
  getSync,
  getUrl,
  listSites,
  patchSite,
  postRegenerate,
  postSite,
  postSiteToken,
  postSync,
  postSyncCommit,
  putSyncUrls,
  putUrls,
} from "./routes.ts";
import { DeleteItemSchema } from "./schemas.ts";
import { platformOnly, readSite, readSites, registerSite, removeSite, rotateSiteToken, updateSite } from "./sites.ts";
import { status } from "./status.ts";
import { abortSync, commitSync, readSync, startSync, syncOwnership, syncScopeOwnership, upsertSyncUrls } from "./syncs.ts";
import { readUrl, removeUrls, upsertUrls } from "./urls.ts";

/** The one record declaration as an OpenAPI 3.1 schema object (JSON Schema 2020-12). */
function recordInputJsonSchema(): Record<string, unknown> {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(RecordInputSchema, { target: "draft-2020-12", io: "input", unrepresentable: "any" });
  return schema;
}

export const admin = new OpenAPIHono<AppEnv>({
  // A query (or a JSON body) that breaks its schema: 400 in the shared error shape.
  defaultHook: (result) => {
    if (!result.success) {
      const body = result.target === "json";
      throw new AdminError(400, {
        error: body ? "invalid_body" : "invalid_query",
        message: body ? "the request body breaks its schema" : "bad query parameters",
        issues: result.error.issues.map((i) => ({
          field: i.path.length > 0 ? i.path.join(".") : body ? "body" : "query",
          rule: i.code,
          message: i.message,
        })),
      });
    }
  },
});

// Components the batch bodies refer to (src/admin/routes.ts says why they are not zod-read).
// The record comes from src/core as JSON Schema: core's zod schemas may be created before
// @hono/zod-openapi extends zod (module order is the bundler's), so they carry no `.openapi()`.
admin.openAPIRegistry.registerComponent("schemas", "RecordInput", recordInputJsonSchema());
admin.openAPIRegistry.register("DeleteItem", DeleteItemSchema);
admin.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
  type: "http",
  scheme: "bearer",
  description: "the ADMIN_TOKEN secret",
});

/** The handlers of the routes declared `public` (`register` adds them): they hold no site's data. */
const publicHandlers = new Set<unknown>();

/** Sign-in, except for a route declared `public`, which answers anyone (and, like every admin path, is 404 when the admin is off). */
const signedIn: MiddlewareHandler<AppEnv> = (c, next) => {
  if (!matchedRoutes(c).some((r) => publicHandlers.has(r.handler))) return adminAuth(c, next);
  return adminEnabled(c.env) ? next() : Promise.resolve(c.notFound());
};

// Outermost first: a dashboard action's way back, then the audit of every write, then sign-in.
admin.use("*", dashboardActionAnswer, auditWrites, signedIn, siteRateLimit);

/**
 * Registers a route with its handler, and the guards its own declaration (`x-access`,
 * src/admin/routes.ts) and path ask for, both before the route's validators: a platform route
 * cannot be added without the platform's guard, a sync named by id is another site's (404)
 * before its body or query is looked at, and a start whose scope names another site is refused (403)
 * before its body's schema is.
 */
function register<R extends RouteConfig & { "x-access": RouteAccess }>(route: R, handler: RouteHandler<R, AppEnv>): void {
  const method = route.method.toUpperCase();
  const path = route.path.replace(/\{(\w+)\}/g, ":$1");
  if (route["x-access"] === "platform") admin.on(method, path, platformOnly);
  if (route.path.startsWith("/syncs/{id}")) admin.on(method, path, syncOwnership);
  if (method === "POST" && route.path === postSync.path) admin.on(method, path, syncScopeOwnership);
  if (route["x-access"] === "public") publicHandlers.add(handler);
  admin.openapi(route, handler);
}

// Ingest (docs/ingest.md), regeneration and status (docs/regeneration.md), and this API's description.
register(putUrls, upsertUrls);
register(deleteUrls, removeUrls);
register(getUrl, readUrl);
register(getStatus, status);
register(postRegenerate, regenerate);
// Full sync (docs/sync.md).
register(postSync, startSync);
register(getSync, readSync);
register(putSyncUrls, upsertSyncUrls);
register(postSyncCommit, commitSync);
register(deleteSync, abortSync);
// The platform API: registered sites (docs/tenants.md), its guard wired from each route's `x-access`.
register(postSite, registerSite);
register(listSites, readSites);
register(getSite, readSite);
register(patchSite, updateSite);
register(postSiteToken, rotateSiteToken);
register(deleteSite, removeSite);
register(getOpenApi, openApiHandler(admin));
