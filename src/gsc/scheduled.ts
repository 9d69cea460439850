/**
 * The cron's read of what Google did with the sitemaps: with GSC_SERVICE_ACCOUNT set, for each site
 * at most every GSC_STATUS_INTERVAL, `GET {api}/webmasters/v3/sites/{property}/sitemaps`
 * (`sitemaps.list`) with the notifier's access token (src/notify/search-console.ts), the answer
 * read up to MAX_LIST_BYTES and stored per sitemap (src/gsc/store.ts). A refused (403), throttled
 * (429, Retry-After honoured) or oversized answer keeps the last good state and backs off like the
 * notifier. Never throws.
 */

import { type SearchConsoleConfig, fillTemplate } from "../config/notify.ts";
import { readVariable } from "../config/variable.ts";
import { GSC_STATUS_INTERVAL } from "../config/variables/notify.ts";
import { type Logger, type RunContext, consoleLogger } from "../notify/context.ts";
import { type Attempt, type Fetcher, attempt, classify, nextAttemptAt } from "../notify/http.ts";
import { TokenCache } from "../notify/search-console.ts";
import type { Services } from "../services-type.ts";
import { parseSitemapsList } from "./parse.ts";
import { type GscStatusStore, type ReadState, newReadState } from "./store.ts";

/**
 * Bytes of a sitemaps.list answer read at most: an entry is ~400 bytes, so 1 MiB holds thousands
 * of sitemaps, far above the MAX_SITEMAPS kept; a bigger answer is refused, not parsed.
 */
export const MAX_LIST_BYTES = 1024 * 1024;
/**
 * Reads per cron run over all sites: the API allows 200 queries per minute per user; the sites
 * past this wait for the next run (they stay due).
 */
const MAX_READS_PER_RUN = 100;

export interface GscReadOptions {
  now?: number;
  fetch?: Fetcher;
  log?: Logger;
}

export interface GscReadReport {
  origin: string;
  /** read: stored; skipped: not due; otherwise the failure kind. */
  result: "read" | "skipped" | "retry" | "config";
  status?: number;
}

/** When a site may be read again: the interval after a success, the backoff after a failure. */
function dueAt(state: ReadState | null, intervalMs: number): number {
  if (state === null) return 0;
  if (state.failures > 0) return state.nextAt;
  return (state.okAt ?? 0) + intervalMs;
}

function listUrl(config: SearchConsoleConfig, origin: string): string {
  return `${config.apiBase}/webmasters/v3/sites/${encodeURIComponent(fillTemplate(config.property, origin))}/sitemaps`;
}

async function readSite(
  ctx: RunContext,
  config: SearchConsoleConfig,
  store: GscStatusStore,
  origin: string,
  previous: ReadState | null,
  tokens: TokenCache,
): Promise<GscReadReport> {
  const state = previous ?? newReadState(origin);
  const token = await tokens.get(ctx, config);
  const answer: Attempt = token.ok
    ? await attempt(ctx.fetch, listUrl(config, origin), { headers: { Authorization: `Bearer ${token.token}` } }, ctx.config.timeoutMs, ctx.now, {
        maxBytes: MAX_LIST_BYTES,
        secrets: [token.token],
      })
    : token.answer;
  let error: string | null = null;
  let kind = classify(answer.status, false);
  if (kind === "ok") {
    const parsed = answer.overCap ? null : parseSitemapsList(answer.text);
    if (parsed) {
      await store.saveRead(
        { ...state, readAt: ctx.now, okAt: ctx.now, status: answer.status, error: null, failures: 0, nextAt: 0, dropped: parsed.dropped },
        parsed.sitemaps,
      );
      return { origin, result: "read", status: answer.status };
    }
    // A 200 that is not the list (or more of it than we read) is the server's trouble: retried later.
    error = answer.overCap ? `answer over ${MAX_LIST_BYTES} bytes: not read` : `answer is not a sitemaps.list: ${answer.body.slice(0, 200)}`;
    kind = "retry";
  }
  const failure = kind === "retired" ? "config" : kind;
  error ??= `${token.ok ? "" : "access token: "}HTTP ${answer.status || "error"}: ${answer.body}`;
  const failures = state.failures + 1;
  await store.saveState({
    ...state,
    readAt: ctx.now,
    status: answer.status,
    error,
    failures,
    nextAt: nextAttemptAt(failure, failures, ctx.now, answer.retryAfterMs),
  });
  const line = `Search Console status ${origin}: ${error}`;
  if (failure === "config") ctx.log.error(`configuration error: ${line}`);
  else ctx.log.warn(line);
  return { origin, result: failure, status: answer.status };
}

/** Reads every due site of one database. */
async function readDatabase(s: Services, intervalMs: number, options: GscReadOptions, budget: { reads: number }): Promise<GscReadReport[]> {
  const config = s.config.notify.searchConsole;
  const store = s.gsc;
  if (config === null || store === null || s.notify === null) return [];
  const now = options.now ?? Date.now();
  const ctx: RunContext = {
    store: s.notify,
    changes: s.store.changes,
    config: s.config.notify,
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    now,
    horizon: now,
    log: options.log ?? consoleLogger,
  };
  const tokens = new TokenCache();
  const reports: GscReadReport[] = [];
  for (const origin of s.config.sites) {
    try {
      const state = await store.state(origin);
      if (now < dueAt(state, intervalMs) || budget.reads <= 0) {
        reports.push({ origin, result: "skipped" });
        continue;
      }
      budget.reads--;
      reports.push(await readSite(ctx, config, store, origin, state, tokens));
    } catch (error) {
      ctx.log.error(`Search Console status ${origin}: stopped: ${String(error)}`);
    }
  }
  return reports;
}

/**
 * The cron entry, after the notifier, over every D1 database's services. GSC_STATUS_INTERVAL is read
 * from `env` here, where it is used: a bad value turns only this feature off. Never throws.
 */
export async function readSearchConsoleStatus(databases: readonly Services[], env: Env, options: GscReadOptions = {}): Promise<GscReadReport[]> {
  const log = options.log ?? consoleLogger;
  let intervalMs: number;
  try {
    intervalMs = readVariable(env, GSC_STATUS_INTERVAL) * 1000;
  } catch (error) {
    log.error(`Search Console status is off: ${error instanceof Error ? error.message : String(error)}`);
    return [];
  }
  const budget = { reads: MAX_READS_PER_RUN };
  const reports: GscReadReport[] = [];
  for (const s of databases) reports.push(...(await readDatabase(s, intervalMs, options, budget)));
  return reports;
}
