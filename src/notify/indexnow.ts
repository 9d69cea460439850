/**
 * IndexNow (https://www.indexnow.org/documentation): after a regeneration, POST the URLs of a
 * site that were added, updated or deleted since the last acknowledged submission, ≤ 10,000 per
 * request. The engine fetches the key file from `keyLocation` to verify the key; the file sits
 * in the root directory (under the Worker's `/sitemap*` route), so it covers the whole host.
 */

import type { IndexNowConfig } from "../config/notify.ts";
import { plural } from "../core/plural.ts";
import { type RunContext, type TargetReport, pastDeadline } from "./context.ts";
import { attempt, classify, nextAttemptAt } from "./http.ts";
import { CURSOR_END_OF_STAMP, type TargetState, due, failed, newState, succeeded } from "./store.ts";

/** Protocol limit of URLs per POST. */
const INDEXNOW_MAX_URLS = 10_000;
export const INDEXNOW_TARGET = "indexnow";
const KEY_FILE = /^\/sitemap-indexnow-([a-zA-Z0-9-]{8,128})\.txt$/;

export function keyFilePath(key: string): string {
  return `/sitemap-indexnow-${key}.txt`;
}

export interface IndexNowPayload {
  host: string;
  key: string;
  keyLocation: string;
  urlList: string[];
}

function indexNowPayload(origin: string, key: string, urlList: string[]): IndexNowPayload {
  return { host: new URL(origin).host, key, keyLocation: origin + keyFilePath(key), urlList };
}

/** The key file for `GET /sitemap-indexnow-{key}.txt`; null (→ 404) for any other key or when IndexNow is off. */
export function keyFileResponse(config: IndexNowConfig | null, pathname: string, method: string): Response | null {
  const match = KEY_FILE.exec(pathname);
  if (!config || !match || match[1] !== config.key) return null;
  return new Response(method === "HEAD" ? null : config.key, {
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      "Cache-Control": "public, max-age=3600",
      "X-Robots-Tag": "noindex",
    },
  });
}

/** Fingerprint of what the failures of this target depend on. */
const configKey = (c: IndexNowConfig): string => `${c.endpoint} ${c.key}`;

/**
 * Sends the pending changes of one site. A batch's changes are acknowledged (cursor moved, state
 * written) right after the engine accepted them; any other answer stops the run for this site
 * with the changes still pending.
 */
export async function submitIndexNow(ctx: RunContext, config: IndexNowConfig, origin: string, current: TargetState | undefined): Promise<TargetReport> {
  const report: TargetReport = { target: INDEXNOW_TARGET, origin, result: "idle", requests: 0, acknowledged: 0 };
  if (!current) {
    // First run for this site: changes made before IndexNow was turned on are not sent (a
    // commit-ordered feed starts at its head, a stamp-ordered one at the settle horizon).
    const { seq } = (await ctx.changes.changes(origin, null, 0)).cursor;
    const baseline = { stamp: ctx.horizon, key: CURSOR_END_OF_STAMP, ...(seq === undefined ? {} : { seq }) };
    await ctx.store.save(newState(INDEXNOW_TARGET, origin, baseline, configKey(config)));
    ctx.log.info(`IndexNow ${origin}: first run, changes from now on will be submitted`);
    return { ...report, result: "baseline" };
  }
  let state = due(current, configKey(config), ctx.now);
  if (!state) return { ...report, result: "waiting" };

  for (let batch = 0; batch < config.batchesPerRun; batch++) {
    // Past the step's time budget: no new request (each may take the whole timeout); the next step goes on.
    if (pastDeadline(ctx)) {
      report.more = true;
      if (batch === 0) report.result = "deferred";
      break;
    }
    // Section moves are not read (moveSeq at the end): the URL itself is announced through its own row.
    const page = await ctx.changes.changes(origin, { ...state.acked, moveSeq: Number.MAX_SAFE_INTEGER }, INDEXNOW_MAX_URLS, ctx.horizon);
    const changes = page.rows.filter((c) => !c.moved);
    if (changes.length === 0) break;
    const payload = indexNowPayload(
      origin,
      config.key,
      changes.map((c) => c.loc),
    );
    const answer = await attempt(
      ctx.fetch,
      config.endpoint,
      { method: "POST", headers: { "Content-Type": "application/json; charset=utf-8" }, body: JSON.stringify(payload) },
      ctx.config.timeoutMs,
      ctx.now,
      { secrets: [config.key] },
    );
    report.requests += 1;
    report.status = answer.status;
    const kind = classify(answer.status, false);
    if (kind === "ok") {
      const { stamp, key, seq } = page.cursor;
      state = succeeded(state, ctx.now, answer.status, seq === undefined ? { stamp, key } : { stamp, key, seq }, changes.length);
      await ctx.store.save(state);
      report.acknowledged += changes.length;
      report.result = "sent";
      if (page.done) break;
      continue;
    }
    const failure = kind === "retired" ? "config" : kind;
    state = failed(state, ctx.now, answer.status, answer.body, nextAttemptAt(failure, state.failures + 1, ctx.now, answer.retryAfterMs));
    await ctx.store.save(state);
    const what = `IndexNow ${origin}: HTTP ${answer.status || "error"} for ${plural(changes.length, "URL")} (kept pending, next attempt ${new Date(state.nextAttemptAt).toISOString()})`;
    if (failure === "config") ctx.log.error(`configuration error: ${what}: ${answer.body}`);
    else ctx.log.warn(`${what}: ${answer.body}`);
    return { ...report, result: failure };
  }
  return report;
}
