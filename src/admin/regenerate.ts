/**
 * POST /sitemap-admin/regenerate[?full=1]: queues a regeneration of the requesting site (a job on
 * JOBS, src/jobs/regenerate.ts) and answers 202 at once; the job continues by itself until the site
 * converged, and its runs show in GET /sitemap-admin/status. `full=1` re-renders every shard
 * (after changing render options, say). A run already holding the site is no error: the job waits
 * for it.
 *
 * Requests are coalesced (docs/jobs.md "One chain per job"): a regeneration already pending or
 * running takes this one (`coalesced`). And a site pass is not asked for twice over: while one is
 * under way (asked for and not begun, its step running, or resumed across the chain's steps) a
 * `full=1` asks for a plain run (the pass re-renders every shard anyway; what changes during it is
 * read from the change feed after it). Otherwise each `full=1` would start the pass over, and a
 * script repeating it would keep a large site from ever converging. Only this route's requests are
 * held to it: a site pass the product itself asks for (a partition move's flip) starts over as
 * before. The dashboard's button sends no query and is bounded by its cooldown
 * (src/admin/auth/action-cooldown.ts).
 */
import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env.ts";
import { regenDeps } from "../regen/scheduled.ts";
import type { Services } from "../services-type.ts";
import { AdminError } from "./errors.ts";
import { jsonResponse } from "./json.ts";
import type { postRegenerate } from "./routes.ts";

/** Whether a site pass of the site is asked for, running, or resumed by the chain's next step; unknown is no. */
async function passUnderWay(s: Services, origin: string): Promise<boolean> {
  try {
    if (await s.jobs?.state.passAsked("regenerate", origin, Date.now())) return true;
    return ((await s.regen?.peek(origin)) ?? null)?.state.pass != null;
  } catch {
    return false;
  }
}

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
  const passRunning = full && (await passUnderWay(services, c.var.origin));
  let started: boolean;
  try {
    // Debounced like a write's (a pending job runs the same pass).
    started = await services.jobs.request("regenerate", c.var.origin, 0, "admin", full && !passRunning ? { full: true } : {});
  } catch (err) {
    console.error("regeneration not queued", err);
    throw new AdminError(500, {
      error: "regeneration_failed",
      message: "the regeneration job could not be queued; the next cron run regenerates the site",
    });
  }
  return jsonResponse({ queued: true as const, site: c.var.origin, full, coalesced: !started || passRunning, status: "/sitemap-admin/status" }, 202, true);
};
