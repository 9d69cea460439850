/**
 * The admin's pages, beside the API (src/admin/app.ts) under `/sitemap-admin/`: the dashboard
 * (behind the sign-in, src/admin/auth.ts), its stylesheet and the sign-in/-out forms (public: no
 * data in them). Not API routes, so not in the OpenAPI document; mounted before the API by
 * src/http/app.ts. Auth is per route: a sub-app's `use("*")` would also run for every API request.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../http/app-env.ts";
import { factory } from "../../http/app-env.ts";
import { DASHBOARD_PATHS } from "../auth/paths.ts";
import { adminAuth, adminEnabled, signIn, signOut } from "../auth.ts";
import { siteStatus } from "../status.ts";
import { actionOutcome } from "./admin-panel.ts";
import { dashboardPage } from "./page.ts";
import { viewOf } from "./paging.ts";
import { stylesheet } from "./stylesheet.ts";

const dashboard = async (c: Context<AppEnv>): Promise<Response> => {
  const principal = c.get("principal");
  const csrf = principal && "csrf" in principal ? principal.csrf : null;
  const query = new URL(c.req.url).searchParams;
  return dashboardPage(await siteStatus(c.var.services, c.var.origin), { csrf, done: actionOutcome(query) }, viewOf(query));
};

export const adminPages = factory.createApp();

adminPages.get("/dashboard.css", (c) => (adminEnabled(c.env) ? stylesheet() : c.notFound()));
adminPages.post("/sign-in", signIn);
adminPages.post("/sign-out", signOut);
// The bare base path: to the dashboard, whose cookie path ends in "/".
adminPages.get("/", (c) => (adminEnabled(c.env) ? c.redirect(DASHBOARD_PATHS[0]!, 301) : c.notFound()));
// "/:root{/?}" is how a sub-app matches its base path with the trailing slash ("/" matches it without).
adminPages.get("/:root{/?}", adminAuth, dashboard);
adminPages.get("/dashboard", adminAuth, dashboard);
