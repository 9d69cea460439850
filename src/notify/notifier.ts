/**
 * The notifier: after each regeneration (the cron's `scheduled`), tell search engines what
 * changed, per site: IndexNow (changed URLs), ping endpoints and Search Console (the index URL,
 * when anything changed). Works from the record store's change feed alone, so it does not depend
 * on what the regeneration did, and from its own state, so a failed or interrupted run loses nothing.
 * A target's trouble (an engine's error, timeout or refusal) is recorded on that target and never
 * stops the others. Our own trouble (the state store failing, an invocation limit) is thrown: the
 * job step fails, is retried and, past its retries, dead-lettered, its status naming the error;
 * what was acknowledged before it stays saved, the rest pending.
 */
import type { Config } from "../config.ts";
import type { ChangeFeed } from "../store/port.ts";
import { type Logger, type RunContext, type TargetReport, consoleLogger } from "./context.ts";
import type { Fetcher } from "./http.ts";
import { INDEXNOW_TARGET, submitIndexNow } from "./indexnow.ts";
import { ping, pingTarget } from "./ping.ts";
import { GSC_TARGET, TokenCache, submitToSearchConsole } from "./search-console.ts";
import { type Cursor, type NotifyStateStore, type TargetState, cursorAfter } from "./store.ts";

export interface NotifyOptions {
  /** Time of the run (ms); defaults to Date.now(). */
  now?: number;
  /** Outbound fetch; defaults to the global one. */
  fetch?: Fetcher;
  log?: Logger;
  /** The lease's name (a job's chain): a run killed mid-way leaves its lease to the retry that carries the same name. */
  leaseId?: string;
  /** When the run stops starting requests (ms, wall clock): the job step's time budget (RunContext). */
  deadline?: number;
}

export interface NotifyReport {
  ranAt: number;
  targets: TargetReport[];
}

/** What notification needs of the services (src/services.ts wires them). */
interface NotifyServices {
  config: Config;
  store: { readonly changes: ChangeFeed };
  /** The notifier's state; null without a DB binding (nothing can be sent). */
  notify: NotifyStateStore | null;
}

/** How long a run holds a site: longer than a cron run may last (15 min wall), shorter than the schedule. */
const LEASE_MS = 20 * 60_000;

export const anythingConfigured = (config: Config): boolean =>
  config.notify.indexNow !== null || config.notify.pingUrls.length > 0 || config.notify.searchConsole !== null;

/**
 * The cron entry: runs every configured notification for every site. Call it after the
 * regeneration; it reads the change feed and makes outbound requests. With nothing configured it
 * does nothing at all. Throws only what it cannot handle (its stores failing, an invocation limit).
 */
export async function notifyAfterRegeneration(databases: readonly NotifyServices[], options: NotifyOptions = {}): Promise<NotifyReport> {
  // `databases`: one services object per D1 database (SITE_DATABASES), each with its own sites.
  const report: NotifyReport = { ranAt: options.now ?? Date.now(), targets: [] };
  for (const s of databases) report.targets.push(...(await notifySites(s, { ...options, now: report.ranAt })).targets);
  return report;
}

/** Runs every configured notification for every site of `s.config`. */
async function notifySites(s: NotifyServices, options: NotifyOptions = {}): Promise<NotifyReport> {
  const now = options.now ?? Date.now();
  const log = options.log ?? consoleLogger;
  const report: NotifyReport = { ranAt: now, targets: [] };
  const { config } = s;
  if (!anythingConfigured(config)) return report;
  const store = s.notify;
  if (store === null) {
    log.error("configuration error: IndexNow, PING_URLS and GSC_SERVICE_ACCOUNT keep their state in D1 (binding DB); nothing was sent");
    return report;
  }
  const n = config.notify;
  const ctx: RunContext = {
    store,
    changes: s.store.changes,
    config: n,
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    now,
    horizon: now - n.settleMs,
    log,
    ...(options.deadline === undefined ? {} : { deadline: options.deadline }),
  };
  const tokens = new TokenCache();
  const retired = n.pingUrls.length > 0 ? await store.retired() : new Map<string, { status: number; retiredAt: number }>();

  const leaseId = options.leaseId ?? crypto.randomUUID();
  for (const origin of config.sites) {
    let claimed = false;
    try {
      claimed = await store.claim(origin, leaseId, now, now + LEASE_MS);
      if (!claimed) {
        log.warn(`${origin}: another notification run holds the site; skipped`);
        continue;
      }
      // Read under the lease: a run that just finished may have moved the cursors.
      const states = new Map((await store.states(origin)).map((s) => [s.target, s]));
      if (n.indexNow) report.targets.push(await submitIndexNow(ctx, n.indexNow, origin, states.get(INDEXNOW_TARGET)));
      const livePings = n.pingUrls.filter((t) => !retired.has(t));
      if (livePings.length === 0 && !n.searchConsole) continue;
      const newest = await s.store.changes.newest(origin, ctx.horizon);
      for (const template of livePings) {
        const r = await ping(ctx, template, origin, states.get(pingTarget(template)), newest);
        report.targets.push(r);
        if (r.result === "retired") {
          await store.retire(template, r.status ?? 0, now);
          retired.set(template, { status: r.status ?? 0, retiredAt: now });
          log.warn(`ping endpoint ${template} answered HTTP ${r.status}: retired, it will not be called again until PING_URLS changes`);
        }
      }
      if (n.searchConsole) report.targets.push(await submitToSearchConsole(ctx, n.searchConsole, origin, states.get(GSC_TARGET), newest, tokens));
    } catch (error) {
      // Our own trouble mid-run (D1, a limit): what was acknowledged is saved, the rest stays pending,
      // and the step fails so that it is retried (and, past its retries, shown dead in status).
      log.error(`notification for ${origin} stopped: ${String(error)}`);
      throw error;
    } finally {
      if (claimed) await store.release(origin, leaseId).catch(() => undefined);
    }
  }
  const sent = report.targets.filter((t) => t.result === "sent");
  if (sent.length > 0) log.info(sent.map((t) => `${t.target} ${t.origin}: ${t.acknowledged} acknowledged`).join("; "));
  return report;
}

function groupStates(states: TargetState[]): Map<string, Map<string, TargetState>> {
  const bySite = new Map<string, Map<string, TargetState>>();
  for (const s of states) {
    let site = bySite.get(s.origin);
    if (!site) bySite.set(s.origin, (site = new Map()));
    site.set(s.target, s);
  }
  return bySite;
}

/**
 * What some configured notification target of a site still needs: the regeneration must not purge
 * a tombstone it has not passed, or its deletion would never be announced. `stamp`: purging
 * `deleted = 1 AND updated_at < stamp` passes no stamp cursor; `seq`: no commit cursor (D1's feed)
 * is before a change numbered at most this, null when none binds (a target without a state starts
 * at the feed's head). null: no target needs any (nothing configured).
 */
export interface Watermark {
  stamp: number;
  seq: number | null;
}

export async function notifyLowWatermark(s: NotifyServices, origin: string, now = Date.now()): Promise<Watermark | null> {
  const { config, notify: store } = s;
  if (!anythingConfigured(config) || store === null) return null;
  const n = config.notify;
  const states = new Map((await store.states(origin)).map((s) => [s.target, s]));
  const retired = n.pingUrls.length > 0 ? await store.retired() : new Map();
  const needed: Cursor[] = [];
  if (n.indexNow) {
    // Without a state yet, the first run will start from its horizon (a commit-ordered feed: its head).
    needed.push(states.get(INDEXNOW_TARGET)?.acked ?? { stamp: now - n.settleMs, key: 0 });
  }
  for (const template of n.pingUrls) {
    const s = states.get(pingTarget(template));
    if (s && !retired.has(template)) needed.push(s.acked);
  }
  const gsc = states.get(GSC_TARGET);
  if (n.searchConsole && gsc) needed.push(gsc.acked);
  if (needed.length === 0) return null;
  const seqs = needed.flatMap((c) => (c.seq === undefined ? [] : [c.seq]));
  return { stamp: Math.min(...needed.map((c) => c.stamp)), seq: seqs.length > 0 ? Math.min(...seqs) : null };
}

/** One row of the status endpoint: a configured target of a site. */
export interface TargetStatus {
  target: string;
  origin: string;
  lastAttemptAt: number | null;
  lastSuccessAt: number | null;
  /** HTTP status of the last attempt (0 = network error or timeout). */
  lastStatus: number | null;
  lastError: string | null;
  /** IndexNow: changed URLs not yet acknowledged; ping / Search Console: index URLs to announce. */
  pending: number;
  failures: number;
  nextAttemptAt: number | null;
  retired: boolean;
}

/** Per site (all, or one) and configured target: last attempt, last success, HTTP status, pending count. */
export async function notifyStatus(s: NotifyServices, only?: string): Promise<TargetStatus[]> {
  const { config, notify: store } = s;
  if (!anythingConfigured(config) || store === null) return [];
  const n = config.notify;
  const feed = s.store.changes;
  const statesBySite = groupStates(await store.states(only));
  const retired = n.pingUrls.length > 0 ? await store.retired() : new Map();
  const rows: TargetStatus[] = [];
  for (const origin of config.sites) {
    if (only !== undefined && origin !== only) continue;
    const states = statesBySite.get(origin) ?? new Map<string, TargetState>();
    let newest: Cursor | null | undefined;
    const indexPending = async (s: TargetState | undefined): Promise<number> => {
      newest ??= await feed.newest(origin, Number.MAX_SAFE_INTEGER);
      return newest && (!s || cursorAfter(newest, s.acked)) ? 1 : 0;
    };
    const row = (target: string, s: TargetState | undefined, pending: number, isRetired = false): TargetStatus => ({
      target,
      origin,
      lastAttemptAt: s?.lastAttemptAt ?? null,
      lastSuccessAt: s?.lastSuccessAt ?? null,
      lastStatus: s?.lastStatus ?? null,
      lastError: s?.lastError ?? null,
      pending,
      failures: s?.failures ?? 0,
      nextAttemptAt: isRetired ? null : s?.nextAttemptAt || null,
      retired: isRetired,
    });
    if (n.indexNow) {
      const s = states.get(INDEXNOW_TARGET);
      rows.push(row(INDEXNOW_TARGET, s, s ? await feed.pending(origin, s.acked) : 0));
    }
    for (const template of n.pingUrls) {
      const s = states.get(pingTarget(template));
      const isRetired = retired.has(template);
      rows.push(row(pingTarget(template), s, isRetired ? 0 : await indexPending(s), isRetired));
    }
    if (n.searchConsole) {
      const s = states.get(GSC_TARGET);
      rows.push(row(GSC_TARGET, s, await indexPending(s)));
    }
  }
  return rows;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The notification section of GET /sitemap-admin/status for one site (times as ISO 8601). */
export async function notificationStatus(s: NotifyServices, origin: string): Promise<Record<string, unknown>[]> {
  return (await notifyStatus(s, origin)).map((t) => ({
    target: t.target,
    lastAttempt: iso(t.lastAttemptAt),
    lastSuccess: iso(t.lastSuccessAt),
    httpStatus: t.lastStatus,
    pending: t.pending,
    failures: t.failures,
    nextAttempt: iso(t.nextAttemptAt),
    retired: t.retired,
    lastError: t.lastError,
  }));
}
