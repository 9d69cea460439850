/**
 * POST /sitemap-admin/regenerate[?full=1]: queues a regeneration of the requesting site (a job on
 * JOBS, src/jobs/regenerate.ts) and answers 202 at once; the job continues by itself until the site
 * converged, and its runs show in GET /sitemap-admin/status. `full=1` re-renders every shard
 * (after changing render options, say). A run already holding the site is no error: the job waits
 * for it.
 */
import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env.ts";
import { regenDeps } from "../regen/scheduled.ts";
import { AdminError } from "./errors.ts";
import { jsonResponse } from "./json.ts";
import type { postRegenerate } from "./routes.ts";

export const regenerate: RouteHandler<typeof postRegenerate, AppEnv> = async (c) => {
  const { services } = c.var;
  const deps = regenDeps(services);
  if (!deps || !services.jobs) {
    const off = services.config.disabled.find((d) => d.feature === "regeneration");
    const message = off
      ? `regeneration is off: configuration error: ${off.variable} ${off.rule}`
      : "regeneration needs the DB (D1) and SNAPSHOTS (KV) bindings and the JOBS queue";
    throw new AdminError(503, { error: "unavailable", message });
  }
  const full = ["1", "true"].includes(c.req.valid("query").full ?? "");
  try {
    // Debounced like a write's (a pending job runs the same pass); `full` is always sent.
    await services.jobs.request("regenerate", c.var.origin, 0, "admin", full ? { full: true } : {});
  } catch (err) {
    console.error("regeneration not queued", err);
    throw new AdminError(500, {
      error: "regeneration_failed",
      message: "the regeneration job could not be queued; the next cron run regenerates the site",
    });
  }
  return jsonResponse({ queued: true as const, site: c.var.origin, full, status: "/sitemap-admin/status" }, 202, true);
};
