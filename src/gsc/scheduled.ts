/**
 * The cron's read of what Google did with the sitemaps: with GSC_SERVICE_ACCOUNT set, for each site
 * at most every GSC_STATUS_INTERVAL, `GET {api}/webmasters/v3/sites/{property}/sitemaps`
 * (`sitemaps.list`), then the same with `?sitemapIndex={our index}` so every shard under the index
 * has its own report, with a read-only access token (src/notify/search-console.ts TokenCache).
 * Answers are read up to a cap and stored per sitemap, the site's own first (src/gsc/keep.ts).
 * A refused (403), throttled (429, Retry-After honoured) or oversized answer of either read keeps
 * the last good state whole and backs off like the notifier. Google's failures are recorded per
 * site; our own (the state store failing, an invocation limit) are thrown, so the job step fails,
 * is retried and shows in status (src/notify/notifier.ts does the same).
 */

import { GSC_READ_SCOPE, type SearchConsoleConfig, fillTemplate } from "../config/notify.ts";
import { readVariable } from "../config/variable.ts";
import { GSC_STATUS_INTERVAL } from "../config/variables/notify.ts";
import { type Logger, type RunContext, consoleLogger } from "../notify/context.ts";
import { type Attempt, type Fetcher, type OutcomeKind, attempt, classify, nextAttemptAt } from "../notify/http.ts";
import { indexUrls } from "../notify/index-urls.ts";
import { TokenCache } from "../notify/search-console.ts";
import type { Services } from "../services-type.ts";
import { keepOwnFirst } from "./keep.ts";
import { type ParsedList, parseSitemapsList } from "./parse.ts";
import { type GscStatusStore, type ReadState, type SitemapReport, newReadState } from "./store.ts";

/**
 * Bytes of a sitemaps.list answer read at most: an entry is ~400 bytes, so 1 MiB holds thousands
 * of sitemaps, far above what a property submits at its top level; a bigger answer is refused, not parsed.
 */
export const MAX_LIST_BYTES = 1024 * 1024;
/**
 * Bytes of the list under one index read at most: ~10,000 entries, more than the 2,000 own
 * sitemaps kept (src/gsc/keep.ts); parsed whole, so well inside a Worker's 128 MB.
 */
const MAX_INDEX_LIST_BYTES = 4 * 1024 * 1024;
/**
 * Requests to the API per cron run over all sites (a site takes one, plus one per index Google
 * lists): the API allows 200 queries per minute per user; the sites past this wait for the next
 * run (they stay due).
 */
const MAX_REQUESTS_PER_RUN = 100;

export interface GscReadOptions {
  now?: number;
  fetch?: Fetcher;
  log?: Logger;
  /** The job step's deadline (ms): no request starts after it (one under way finishes within its timeout, as the notifier's). */
  deadline?: number;
}

export interface GscReadReport {
  origin: string;
  /** read: stored; skipped: not due; budget: the step's deadline came first (nothing saved: still due); otherwise the failure kind. */
  result: "read" | "skipped" | "budget" | "retry" | "config";
  status?: number;
  /** Requests sent to the API for this site (the token request aside). */
  requests?: number;
}

/** When a site may be read again: the interval after a success, the backoff after a failure. */
function dueAt(state: ReadState | null, intervalMs: number): number {
  if (state === null) return 0;
  if (state.failures > 0) return state.nextAt;
  return (state.okAt ?? 0) + intervalMs;
}

function listUrl(config: SearchConsoleConfig, origin: string, sitemapIndex: string | null): string {
  const url = `${config.apiBase}/webmasters/v3/sites/${encodeURIComponent(fillTemplate(config.property, origin))}/sitemaps`;
  return sitemapIndex === null ? url : `${url}?sitemapIndex=${encodeURIComponent(sitemapIndex)}`;
}

type ListRead = { ok: true; list: ParsedList; status: number } | { ok: false; answer: Attempt; kind: Exclude<OutcomeKind, "ok">; error: string };

/** One sitemaps.list request, its answer read up to `maxBytes` and parsed. */
async function readList(ctx: RunContext, url: string, token: string, maxBytes: number): Promise<ListRead> {
  const answer = await attempt(ctx.fetch, url, { headers: { Authorization: `Bearer ${token}` } }, ctx.config.timeoutMs, ctx.now, {
    maxBytes,
    secrets: [token],
  });
  const kind = classify(answer.status, false);
  if (kind !== "ok") return { ok: false, answer, kind, error: `HTTP ${answer.status || "error"}: ${answer.body}` };
  const list = answer.overCap ? null : parseSitemapsList(answer.text);
  if (list) return { ok: true, list, status: answer.status };
  // A 200 that is not the list (or more of it than we read) is the server's trouble: retried later.
  const error = answer.overCap ? `answer over ${maxBytes} bytes: not read` : `answer is not a sitemaps.list: ${answer.body.slice(0, 200)}`;
  return { ok: false, answer, kind: "retry", error };
}

/** A failed read: the state only (the stored reports stay as they were), backed off by its kind. */
async function saveFailure(
  ctx: RunContext,
  store: GscStatusStore,
  state: ReadState,
  failed: Extract<ListRead, { ok: false }>,
  requests: number,
): Promise<GscReadReport> {
  const failure = failed.kind === "retired" ? "config" : failed.kind;
  const failures = state.failures + 1;
  await store.saveState({
    ...state,
    readAt: ctx.now,
    status: failed.answer.status,
    error: failed.error,
    failures,
    nextAt: nextAttemptAt(failure, failures, ctx.now, failed.answer.retryAfterMs),
  });
  const line = `Search Console status ${state.origin}: ${failed.error}`;
  if (failure === "config") ctx.log.error(`configuration error: ${line}`);
  else ctx.log.warn(line);
  return { origin: state.origin, result: failure, status: failed.answer.status, requests };
}

/** The step's time left (ms): unbounded without a deadline. */
const timeLeft = (ctx: RunContext): number => (ctx.deadline === undefined ? Number.POSITIVE_INFINITY : ctx.deadline - Date.now());

async function readSite(
  ctx: RunContext,
  config: SearchConsoleConfig,
  store: GscStatusStore,
  origin: string,
  previous: ReadState | null,
  tokens: TokenCache,
): Promise<GscReadReport> {
  const state = previous ?? newReadState(origin);
  const stopped: GscReadReport = { origin, result: "budget" };
  if (timeLeft(ctx) <= 0) return stopped;
  const token = await tokens.get(ctx, config);
  if (!token.ok) {
    const { answer } = token;
    const kind = classify(answer.status, false);
    const failed = {
      ok: false as const,
      answer,
      kind: kind === "ok" ? ("retry" as const) : kind,
      error: `access token: HTTP ${answer.status || "error"}: ${answer.body}`,
    };
    return saveFailure(ctx, store, state, failed, 0);
  }
  let requests = 1;
  if (timeLeft(ctx) <= 0) return stopped;
  const top = await readList(ctx, listUrl(config, origin, null), token.token, MAX_LIST_BYTES);
  if (!top.ok) return saveFailure(ctx, store, state, top, requests);
  const lists: SitemapReport[][] = [top.list.sitemaps];
  let dropped = top.list.dropped;
  // The shards are listed only under their index, and only once Google knows the index.
  for (const indexUrl of indexUrls(origin)) {
    if (!top.list.sitemaps.some((s) => s.path === indexUrl)) continue;
    requests++;
    if (timeLeft(ctx) <= 0) return { ...stopped, requests: requests - 1 };
    const under = await readList(ctx, listUrl(config, origin, indexUrl), token.token, MAX_INDEX_LIST_BYTES);
    if (!under.ok) return saveFailure(ctx, store, state, under, requests);
    lists.push(under.list.sitemaps);
    dropped += under.list.dropped;
  }
  const kept = keepOwnFirst(origin, lists);
  await store.saveRead(
    { ...state, readAt: ctx.now, okAt: ctx.now, status: top.status, error: null, failures: 0, nextAt: 0, dropped: dropped + kept.dropped },
    kept.sitemaps,
  );
  return { origin, result: "read", status: top.status, requests };
}

/** Reads every due site of one database. */
async function readDatabase(s: Services, intervalMs: number, options: GscReadOptions, budget: { requests: number }): Promise<GscReadReport[]> {
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
    ...(options.deadline === undefined ? {} : { deadline: options.deadline }),
  };
  const tokens = new TokenCache(GSC_READ_SCOPE);
  const reports: GscReadReport[] = [];
  for (const origin of s.config.sites) {
    try {
      const state = await store.state(origin);
      // A site is started only when the budget holds all of its requests (the list and one per index).
      if (now < dueAt(state, intervalMs) || budget.requests < 1 + indexUrls(origin).length) {
        reports.push({ origin, result: "skipped" });
        continue;
      }
      const report = await readSite(ctx, config, store, origin, state, tokens);
      budget.requests -= report.requests ?? 0;
      reports.push(report);
    } catch (error) {
      ctx.log.error(`Search Console status ${origin}: stopped: ${String(error)}`);
      throw error;
    }
  }
  return reports;
}

/**
 * The cron entry, after the notifier, over every D1 database's services. GSC_STATUS_INTERVAL is read
 * from `env` here, where it is used: a bad value turns only this feature off. Throws only what it
 * cannot handle (its stores failing, an invocation limit).
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
  const budget = { requests: MAX_REQUESTS_PER_RUN };
  const reports: GscReadReport[] = [];
  for (const s of databases) reports.push(...(await readDatabase(s, intervalMs, options, budget)));
  return reports;
}
