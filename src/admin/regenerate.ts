/**
 * POST /sitemap-admin/regenerate[?full=1]: runs a regeneration of the requesting site now, bounded
 * like the cron's, and answers its summary. 409 while another run holds the site; `full=1`
 * re-renders every shard (after changing render options, say).
 */
import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env.ts";
import { siteSummary } from "../partitions/regenerate.ts";
import type { RegenDeps } from "../regen/deps.ts";
import { RegenBusyError } from "../regen/lease.ts";
import { purgeChanged } from "../regen/purge.ts";
import { regenerateSite } from "../regen/regenerate.ts";
import { regenDeps } from "../regen/scheduled.ts";
import { AdminError } from "./errors.ts";
import { jsonResponse } from "./json.ts";
import type { postRegenerate } from "./routes.ts";

export const regenerate: RouteHandler<typeof postRegenerate, AppEnv> = async (c) => {
  // A partitioned site: every partition runs, in parallel; one summary answers for the site.
  const units = (c.var.services.partitions ?? [c.var.services]).map(regenDeps);
  if (units.some((deps) => deps === null)) {
    const off = c.var.services.config.disabled.find((d) => d.feature === "regeneration");
    const message = off
      ? `regeneration is off: configuration error: ${off.variable} ${off.rule}`
      : "regeneration needs the DB (D1) and SNAPSHOTS (KV) bindings";
    throw new AdminError(503, { error: "unavailable", message });
  }
  const full = ["1", "true"].includes(c.req.valid("query").full ?? "");
  let ctx: unknown;
  try {
    ctx = c.executionCtx;
  } catch {
    ctx = undefined;
  }
  try {
    const run = (deps: RegenDeps) => regenerateSite(deps, c.var.origin, { trigger: "admin", full, onPublished: purgeChanged(ctx, c.var.origin) });
    const summaries = await Promise.all(units.map((deps) => run(deps!)));
    return jsonResponse(summaries.length === 1 ? summaries[0]! : siteSummary(c.var.origin, summaries), 200, true);
  } catch (err) {
    if (err instanceof RegenBusyError) throw new AdminError(409, { error: "busy", message: err.message });
    console.error("regeneration failed", err);
    throw new AdminError(500, { error: "regeneration_failed", message: err instanceof Error ? err.message : String(err) });
  }
};
