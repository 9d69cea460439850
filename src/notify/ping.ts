/**
 * Ping endpoints (PING_URLS): `GET` each template with `{sitemap}` replaced by the URL-encoded
 * index URL and `{origin}`, `{host}` filled (`pingUrl`), after a regeneration that changed
 * something. The classic endpoints are dead (Google 404 since 2023, Bing 410 since 2021), so none
 * is configured by default, and a 404 or 410 retires an endpoint: logged once, skipped until its
 * template changes. Other failures retry next run with backoff.
 */
import { pingUrl } from "../config/notify.ts";
import { type RunContext, type TargetReport, deferred, pastDeadline } from "./context.ts";
import { attempt, classify, nextAttemptAt } from "./http.ts";
import { indexUrls } from "./index-urls.ts";
import { type Cursor, type TargetState, cursorAfter, due, failed, newState, succeeded } from "./store.ts";

export const pingTarget = (template: string): string => `ping ${template}`;

/**
 * Pings one endpoint for one site when the site changed since the last acknowledged ping.
 * Returns "retired" when the endpoint answered 404/410; the caller records it for every site.
 */
export async function ping(
  ctx: RunContext,
  template: string,
  origin: string,
  current: TargetState | undefined,
  newest: Cursor | null,
): Promise<TargetReport> {
  const target = pingTarget(template);
  const report: TargetReport = { target, origin, result: "idle", requests: 0, acknowledged: 0 };
  if (!newest || (current && !cursorAfter(newest, current.acked))) return report;
  let state = due(current ?? newState(target, origin, { stamp: 0, key: 0 }, ""), "", ctx.now);
  if (!state) return { ...report, result: "waiting" };

  const urls = indexUrls(origin);
  for (const indexUrl of urls) {
    // Past the step's time budget: the ping waits for the next step (its cursor unmoved; a ping repeated is harmless).
    if (pastDeadline(ctx)) return deferred(report);
    const answer = await attempt(ctx.fetch, pingUrl(template, origin, indexUrl), { method: "GET" }, ctx.config.timeoutMs, ctx.now);
    report.requests += 1;
    report.status = answer.status;
    const kind = classify(answer.status, true);
    if (kind === "ok") continue;
    if (kind === "retired") {
      state = failed(state, ctx.now, answer.status, "endpoint retired", Number.MAX_SAFE_INTEGER);
      await ctx.store.save(state);
      return { ...report, result: "retired" };
    }
    state = failed(state, ctx.now, answer.status, answer.body, nextAttemptAt(kind, state.failures + 1, ctx.now, answer.retryAfterMs));
    await ctx.store.save(state);
    const what = `ping ${template} for ${origin}: HTTP ${answer.status || "error"} (retry after ${new Date(state.nextAttemptAt).toISOString()})`;
    if (kind === "config") ctx.log.error(`configuration error: ${what}: ${answer.body}`);
    else ctx.log.warn(`${what}: ${answer.body}`);
    return { ...report, result: kind };
  }
  state = succeeded(state, ctx.now, report.status ?? 200, newest, urls.length);
  await ctx.store.save(state);
  return { ...report, result: "sent", acknowledged: urls.length };
}
