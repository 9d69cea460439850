/**
 * POST /sitemap-admin/regenerate[?full=1]: runs a regeneration of the requesting site now, bounded
 * like the cron's, and answers its summary. 409 while another run holds the site; `full=1`
 * re-renders every shard (after changing render options, say).
 */
import type { Context } from "hono";
import type { AppEnv } from "../app.ts";
import { RegenBusyError } from "../regen/lease.ts";
import { purgeChanged } from "../regen/purge.ts";
import { regenerateSite } from "../regen/regenerate.ts";
import { regenDeps } from "../regen/scheduled.ts";
import { json } from "./status.ts";

export async function regenerate(c: Context<AppEnv>): Promise<Response> {
  const deps = regenDeps(c.var.services);
  if (!deps) return json({ error: "unavailable", message: "regeneration needs the DB (D1) and SNAPSHOTS (KV) bindings" }, 503);
  const full = ["1", "true"].includes(c.req.query("full") ?? "");
  let ctx: unknown;
  try {
    ctx = c.executionCtx;
  } catch {
    ctx = undefined;
  }
  try {
    const summary = await regenerateSite(deps, c.var.origin, { trigger: "admin", full, onPublished: purgeChanged(ctx, c.var.origin) });
    return json(summary);
  } catch (err) {
    if (err instanceof RegenBusyError) return json({ error: "busy", message: err.message }, 409);
    console.error("regeneration failed", err);
    return json({ error: "regeneration_failed", message: err instanceof Error ? err.message : String(err) }, 500);
  }
}
