/**
 * A dashboard action (a form posted from the dashboard, src/admin/auth/browser-guard.ts) is answered
 * with a way back: 303 to the dashboard, which says what came of it (`?done=<action>&status=<code>`,
 * src/admin/dashboard/admin-panel.ts). The API route's own answer (JSON) is for scripts; the audit
 * has recorded it before this runs.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../http/app-env.ts";
import { DASHBOARD_PATHS } from "../auth/paths.ts";

export const dashboardActionAnswer: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (!c.get("dashboardAction")) return;
  const action = c.req.path.split("/").pop() ?? "";
  const location = `${DASHBOARD_PATHS[0]}?${new URLSearchParams({ done: action, status: String(c.res.status) })}`;
  // Unset first: Hono's setter would carry the JSON answer's headers over to this one.
  c.res = undefined as unknown as Response;
  c.res = new Response(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store" } });
};
