/**
 * The refresh of the crawlers' published IP ranges (the `crawler-ranges` job, src/jobs/crawler-ranges.ts):
 * each crawler of CRAWLER_IP_RANGES whose list is missing, was fetched from another URL, or was last
 * checked REFRESH_EVERY_MS ago or more is fetched again: one GET with the product's User-Agent, a
 * timeout, and its body read up to MAX_BODY_BYTES. A list that cannot be had (an HTTP error, no
 * answer, a timeout, a body too large or not a list) keeps the prefixes fetched before from the same
 * URL (never another URL's) and stores what went wrong, naming the host; one crawler failing never stops the others. Cost: one KV list, a read per stored list,
 * and per crawler due one subrequest and one KV write.
 */
import { USER_AGENT } from "../core/user-agent.ts";
import { isOwnLimit } from "../outbound/own-limit.ts";
import { readCapped } from "../outbound/read-capped.ts";
import type { CrawlerRangeStore, StoredRanges } from "./range-store.ts";
import { RangeFileError, parseRangeList } from "./ranges.ts";

/** How often a list is fetched again (daily; the first heartbeat fetches those never stored). */
export const REFRESH_EVERY_MS = 24 * 3600_000;
/** Time to fetch and read one list. */
const TIMEOUT_MS = 10_000;
/** googlebot.json is ~40 KB: 1 MiB is plenty, and bounds what a wrong URL can make us read. */
const MAX_BODY_BYTES = 1024 * 1024;

interface RefreshOptions {
  now?: number;
  /** Outbound fetch (tests pass a fake); the global one by default. */
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/** What one refresh did, per configured crawler. */
export interface RefreshReport {
  /** Crawlers fetched and stored. */
  fetched: { name: string; prefixes: number }[];
  /** Crawlers whose fetch failed: their previous prefixes stay. */
  failed: { name: string; error: string }[];
  /** Crawlers checked within REFRESH_EVERY_MS: not fetched. */
  fresh: string[];
}

/** Whether `stored` (the list of a configured crawler at `url`) is to be fetched again at `now`. */
const isDue = (stored: StoredRanges | undefined, url: string, now: number): boolean =>
  stored === undefined || stored.url !== url || now - stored.checkedAt >= REFRESH_EVERY_MS || now < stored.checkedAt - REFRESH_EVERY_MS;

const host = (url: string): string => new URL(url).host;

/** Errors the list's own checks throw (HTTP status, size, format), said as they are. */
class RangeListError extends Error {}

/** A failed fetch's cause: its code (ECONNREFUSED, ENOTFOUND) or message, else the error's own message. */
function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return err instanceof Error ? err.message : String(err);
}

/** One list's prefixes, or throws an Error whose message says what went wrong (no body, no secret). */
async function fetchList(url: string, fetchFn: typeof fetch, timeoutMs: number): Promise<{ prefixes: string[]; refused: string[] }> {
  const controller = new AbortController();
  const timedOut = new Error(`timed out after ${timeoutMs} ms`);
  // The deadline covers the answer and the body's read, whatever the fetch makes of the signal.
  const deadline = new Promise<never>((_, reject) => controller.signal.addEventListener("abort", () => reject(timedOut)));
  deadline.catch(() => undefined);
  const timer = setTimeout(() => controller.abort(timedOut), timeoutMs);
  try {
    const response = await Promise.race([
      fetchFn(url, { headers: { "User-Agent": USER_AGENT, Accept: "application/json" }, signal: controller.signal }),
      deadline,
    ]);
    if (!response.ok) {
      await response.body?.cancel();
      throw new RangeListError(`${host(url)} answered HTTP ${response.status}`);
    }
    const { text, overCap } = await Promise.race([readCapped(response.body, MAX_BODY_BYTES), deadline]);
    if (overCap) throw new RangeListError(`the list is larger than ${MAX_BODY_BYTES} bytes`);
    return parseRangeList(text);
  } catch (err) {
    // The invocation's own limit refused the request: the job fails, the list keeps its state.
    if (isOwnLimit(err)) throw err;
    // An abort surfaces as whatever the fetch or the body's read makes of it: said one way.
    if (controller.signal.aborted) throw timedOut;
    // A fetch that got no answer says little ("fetch failed", workerd's "internal error; reference = …"): say which host, and the cause when there is one.
    if (!(err instanceof RangeListError || err instanceof RangeFileError))
      throw new Error(`${host(url)} could not be reached (network error: ${causeOf(err)})`);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** What an error says in status: its message, short. */
const described = (err: unknown): string => (err instanceof Error ? err.message : String(err)).slice(0, 300);

/** Fetches every list of `ranges` that is due (in parallel: a handful), and stores each outcome. */
export async function refreshCrawlerRanges(
  store: CrawlerRangeStore,
  ranges: readonly { name: string; url: string }[],
  options: RefreshOptions = {},
): Promise<RefreshReport> {
  const now = options.now ?? Date.now();
  // The global fetch as it is at call time: the invocation's meter counts it (src/jobs/meter.ts).
  const fetchFn = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  const stored = new Map((await store.loadAll()).map((l) => [l.name, l]));
  const outcomes = await Promise.all(
    ranges.map(async ({ name, url }): Promise<{ name: string; prefixes?: number; error?: string }> => {
      const before = stored.get(name);
      if (!isDue(before, url, now)) return { name };
      let list: StoredRanges;
      try {
        const { prefixes, refused } = await fetchList(url, fetchFn, timeoutMs);
        list = { name, url, prefixes, refused, fetchedAt: now, checkedAt: now, error: null };
      } catch (err) {
        if (isOwnLimit(err)) throw err;
        const error = described(err);
        // Only the same URL's earlier prefixes stay: a stand-in's (a local file, then the default URL again) are not this list.
        const same = before?.url === url ? before : undefined;
        list = { name, url, prefixes: same?.prefixes ?? [], refused: same?.refused ?? [], fetchedAt: same?.fetchedAt ?? null, checkedAt: now, error };
      }
      await store.save(list);
      return list.error === null ? { name, prefixes: list.prefixes.length } : { name, error: list.error };
    }),
  );
  return {
    fetched: outcomes.flatMap((o) => (o.prefixes === undefined ? [] : [{ name: o.name, prefixes: o.prefixes }])),
    failed: outcomes.flatMap((o) => (o.error === undefined ? [] : [{ name: o.name, error: o.error }])),
    fresh: outcomes.flatMap((o) => (o.prefixes === undefined && o.error === undefined ? [o.name] : [])),
  };
}

/** The job's outcome line: `googlebot 1284 prefixes; bingbot failed: HTTP 500; fresh: x`. */
export function describeRefresh(report: RefreshReport): string {
  const parts = [
    ...report.fetched.map((f) => `${f.name} ${f.prefixes} prefixes`),
    ...report.failed.map((f) => `${f.name} failed: ${f.error}`),
    ...(report.fresh.length > 0 ? [`fresh: ${report.fresh.join(", ")}`] : []),
  ];
  return parts.length > 0 ? parts.join("; ") : "nothing configured";
}
