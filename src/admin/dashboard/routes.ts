/**
 * The admin's pages, beside the API (src/admin/app.ts) under `/sitemap-admin/`: the dashboard
 * (behind the sign-in, src/admin/auth.ts), its stylesheet and the sign-in/-out forms (public: no
 * data in them). Not API routes, so not in the OpenAPI document; mounted before the API by
 * src/http/app.ts. Auth is per route: a sub-app's `use("*")` would also run for every API request.
 */
import type { Context, Handler } from "hono";
import type { AppEnv } from "../../http/app-env.ts";
import { factory } from "../../http/app-env.ts";
import { siteRegistry } from "../../services.ts";
import { DASHBOARD_PATHS } from "../auth/paths.ts";
import { adminAuth, adminEnabled, onPlatformHost, signIn, signOut } from "../auth.ts";
import { AdminError } from "../errors.ts";
import type { RouteAccess } from "../routes.ts";
import { HEALTH_PAGE } from "../schemas.ts";
import { healthPage } from "../sites.ts";
import { siteStatus } from "../status.ts";
import { actionOutcome } from "./admin-panel.ts";
import { dashboardPage } from "./page.ts";
import { viewOf } from "./paging.ts";
import { platformPage } from "./platform.ts";
import { stylesheet } from "./stylesheet.ts";

const dashboard = async (c: Context<AppEnv>): Promise<Response> => {
  const principal = c.get("principal");
  const csrf = principal && "csrf" in principal ? principal.csrf : null;
  const query = new URL(c.req.url).searchParams;
  // The platform's page is linked for the platform credential only, where there is a registry.
  const platformLink = onPlatformHost(c) && principal?.via !== "site-token" && siteRegistry(c.env) !== null;
  return dashboardPage(await siteStatus(c.var.services, c.var.origin), { csrf, done: actionOutcome(query), platformLink }, viewOf(query));
};

/** The platform's page: a page of registered sites with their health, each its status read (HEALTH_PAGE a page). */
const platform = async (c: Context<AppEnv>): Promise<Response> => {
  // Only on the platform's hosts: a tenant's host (any script on it is the tenant's) never shows other tenants.
  if (!onPlatformHost(c)) return c.notFound();
  if (c.get("principal")?.via === "site-token") {
    return new AdminError(403, { error: "forbidden", message: "the platform's page is for the platform credential" }).getResponse();
  }
  const registry = siteRegistry(c.env);
  if (!registry) return c.notFound();
  const raw = new URL(c.req.url).searchParams.get("after");
  const after = raw && raw.length <= 300 ? raw : null;
  const rows = await registry.page(after, HEALTH_PAGE + 1, null);
  return platformPage({ ...(await healthPage(c, rows, HEALTH_PAGE)), after });
};

export const adminPages = factory.createApp();

/** A page as registered: its method, its path under /sitemap-admin (Hono's spelling) and who may call it. */
export interface PageRoute {
  method: "GET" | "POST";
  path: string;
  access: RouteAccess;
}

/**
 * Every page's one declaration of who may call it (src/admin/routes.ts `RouteAccess`), beside the
 * API's `x-access`: together the admin's route table, which test/workers/break50c-matrix-gaps.test.ts
 * holds against every route served. Not in the OpenAPI document: these are HTML pages and forms.
 */
export const pageRoutes: PageRoute[] = [];

/** Registers a page with its declaration; a page not `public` is behind the sign-in (a `platform` page checks its host and credential itself). */
function page(method: PageRoute["method"], path: string, access: RouteAccess, handler: Handler<AppEnv>): void {
  pageRoutes.push({ method, path, access });
  if (access === "public") adminPages.on(method, path, handler);
  else adminPages.on(method, path, adminAuth, handler);
}

page("GET", "/dashboard.css", "public", (c) => (adminEnabled(c.env) ? stylesheet() : c.notFound()));
page("POST", "/sign-in", "public", signIn);
page("POST", "/sign-out", "public", signOut);
// The bare base path: to the dashboard, whose cookie path ends in "/".
page("GET", "/", "public", (c) => (adminEnabled(c.env) ? c.redirect(DASHBOARD_PATHS[0]!, 301) : c.notFound()));
// "/:root{/?}" is how a sub-app matches its base path with the trailing slash ("/" matches it without).
page("GET", "/:root{/?}", "site", dashboard);
page("GET", "/dashboard", "site", dashboard);
// The registered sites with their health (docs/tenants.md), for the platform: not a site's token.
page("GET", "/platform", "platform", platform);
