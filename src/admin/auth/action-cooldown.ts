/**
 * The dashboard's action runs at most once per site every ACTION_COOLDOWN_SECONDS (docs/dashboard.md
 * "What a browser may do"). A script on the site's pages can make the action as the signed-in
 * person (`form.submit()` is a same-origin navigation, which carries the page's CSRF token), as
 * often as it likes; the cooldown bounds what that costs to what a person clicking would. It is per
 * site, not per session: every browser credential of the site shares it. Scripts with the bearer
 * token or a service token are not limited by it (they could write anything anyway).
 *
 * Kept with the admin's other state (src/admin-state/store.ts: D1, or the site's writer object) and
 * taken by one conditional upsert, so two clicks at once never both run.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../http/app-env.ts";
import { AdminError } from "../errors.ts";

/** Five minutes: a regeneration of a large site takes a few steps of the jobs chain; a second one sooner adds nothing. */
export const ACTION_COOLDOWN_SECONDS = 300;

/** A 429 while the site's cooldown of `action` holds (Retry-After: what is left of it), or null when this request took it. */
export async function actionCooldown(c: Context<AppEnv>, action: string): Promise<Response | null> {
  const store = c.var.services.admin;
  if (!store) {
    // Nowhere to keep the cooldown: the action is refused rather than left unbounded.
    return new AdminError(503, {
      error: "unavailable",
      message: "the dashboard's action needs the DB (D1) binding; the bearer token still works",
    }).getResponse();
  }
  const now = Date.now();
  const heldUntil = await store.claimCooldown(c.var.origin, action, now, now + ACTION_COOLDOWN_SECONDS * 1000);
  if (heldUntil === 0) return null;
  c.set("refusal", "cooldown");
  const wait = Math.max(1, Math.ceil((heldUntil - now) / 1000));
  return new AdminError(
    429,
    {
      error: "cooldown",
      message: `the dashboard's ${action} runs at most once per site every ${ACTION_COOLDOWN_SECONDS / 60} minutes; try again in ${wait} s (the bearer token is not limited)`,
    },
    { "Retry-After": String(wait) },
  ).getResponse();
}
