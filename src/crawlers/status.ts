/**
 * What GET /sitemap-admin/status answers under `crawlers` (src/crawlers/types.ts `CrawlersStatus`):
 * per crawler, its requests over 24 h and 7 days, its last fetch of the index, robots.txt and each
 * section's shards, its failed answers; and the listed documents no verified crawler fetched in
 * CRAWLER_STALE_DAYS, once the log is that old. Five queries whatever the site's size (the fetch log holds at most one row per
 * crawler, document, minute and outcome, and is trimmed after CRAWLER_STALE_DAYS + 1 days).
 */
import type { CountSlot, CrawlerLogStore, StoredFetch } from "./log-store.ts";
import type { CrawlersStatus, DocumentFetchStatus } from "./types.ts";

const DAY_MS = 86400_000;
/** Per crawler and document, at most this many last fetches are read (a 100M site lists ~2,000 documents). */
const LAST_FETCHES_READ = 20_000;
/** Failed fetches read at most (the newest), and shown per crawler. */
const FAILED_READ = 500;
const FAILED_SHOWN = 50;
const DOCUMENTS_SHOWN = 200;
const STALE_SHOWN = 50;

/** A listed shard of the manifest: its section and `<section>-<n>` name. */
interface ListedDocument {
  section: string;
  document: string;
}

const shown = (f: StoredFetch): DocumentFetchStatus => ({
  document: f.document,
  path: f.path,
  at: new Date(f.at).toISOString(),
  status: f.status,
  bytes: f.bytes,
  source: f.source,
});

/** Requests in the last 24 h (hour slots) and 7 days (day slots: today and the six before it). */
function requests(slots: readonly CountSlot[], crawler: string, now: number): CrawlersStatus["crawlers"][number]["requests"] {
  const hour = Math.floor(now / 3600_000);
  const day = Math.floor(now / DAY_MS);
  const sum = (verified: boolean, kind: "h" | "d", from: number) =>
    slots
      .filter(
        (s) => s.crawler === crawler && s.verified === verified && s.slot.startsWith(kind) && s.period > from && s.period <= (kind === "h" ? hour : day),
      )
      .reduce((n, s) => n + s.requests, 0);
  return {
    verified24h: sum(true, "h", hour - 24),
    verified7d: sum(true, "d", day - 7),
    unverified24h: sum(false, "h", hour - 24),
    unverified7d: sum(false, "d", day - 7),
  };
}

export interface CrawlerStatusInput {
  log: CrawlerLogStore | null;
  origin: string;
  /** The crawlers configured (CRAWLER_IP_RANGES names), shown even before any request. */
  names: readonly string[];
  ranges: CrawlersStatus["ranges"];
  staleDays: number;
  /** The listed shards of the site's manifest (none when there is no manifest). */
  listed: readonly ListedDocument[];
  now: number;
}

export async function crawlersStatus(input: CrawlerStatusInput): Promise<CrawlersStatus> {
  const { log, origin, now, staleDays } = input;
  if (!log) return { enabled: false, staleDays, since: null, ranges: input.ranges, crawlers: [], stale: { count: 0, documents: [] } };
  const week = now - 7 * DAY_MS;
  const staleSince = now - staleDays * DAY_MS;
  const [started, slots, last, failed] = await Promise.all([
    log.startedAt(origin, now),
    log.counts(origin),
    log.lastFetches(origin, Math.min(week, staleSince), LAST_FETCHES_READ),
    log.failedFetches(origin, week, FAILED_READ),
  ]);
  const lastOf = new Map(last.map((f) => [`${f.crawler} ${f.document}`, f]));
  const names = [...new Set([...input.names, ...slots.map((s) => s.crawler), ...last.map((f) => f.crawler)])];
  const sections = [...new Set(input.listed.map((d) => d.section))];
  const crawlers = names.map((name) => {
    const mine = last.filter((f) => f.crawler === name && f.at >= week);
    const byDocument = new Map(mine.map((f) => [f.document, f]));
    const one = (document: string) => {
      const f = byDocument.get(document);
      return f ? shown(f) : null;
    };
    return {
      name,
      requests: requests(slots, name, now),
      index: one("index"),
      robots: one("robots.txt"),
      sections: sections.map((section) => {
        const listed = input.listed.filter((d) => d.section === section);
        const fetched = listed.map((d) => byDocument.get(d.document)).filter((f): f is StoredFetch => f !== undefined);
        const newest = fetched.reduce<StoredFetch | null>((a, f) => (a === null || f.at > a.at ? f : a), null);
        return { section, shards: listed.length, fetched: fetched.length, last: newest && shown(newest) };
      }),
      // A failure stays a problem while it is the crawler's last answer for that document.
      errors: failed
        .filter((f) => f.crawler === name && lastOf.get(`${name} ${f.document}`)?.at === f.at)
        .slice(0, FAILED_SHOWN)
        .map(shown),
      documents: mine.slice(0, DOCUMENTS_SHOWN).map(shown),
    };
  });
  const since = started;
  const fetchedRecently = new Set(last.filter((f) => f.at >= staleSince).map((f) => f.document));
  // A log younger than the stale window cannot say that a document was not fetched in it.
  const stale = since > staleSince ? [] : ["index", ...input.listed.map((d) => d.document)].filter((d) => !fetchedRecently.has(d));
  return {
    enabled: true,
    staleDays,
    since: new Date(since).toISOString(),
    ranges: input.ranges,
    crawlers,
    stale: { count: stale.length, documents: stale.slice(0, STALE_SHOWN) },
  };
}
