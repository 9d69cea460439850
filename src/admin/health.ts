/**
 * The health list (issue 43): the problems of one site, red first, each with what to do about it,
 * from what the status document already holds (src/admin/status.ts) and the crawler log
 * (`crawlers`, src/crawlers/types.ts). Pure: no I/O, the time given. The dashboard opens with it
 * (src/admin/dashboard/page.ts); GET /sitemap-admin/status answers it as `health`. The rules, their
 * levels and actions are listed in docs/dashboard.md "Health".
 */
import type { CrawlersStatus, DocumentFetchStatus } from "../crawlers/types.ts";
import type { HealthItem, HealthLevel } from "./health-item.ts";
import { rangeErrors } from "./health-ranges.ts";

export type { HealthItem } from "./health-item.ts";

/** What a lastmod sample says per section: recent records with a lastmod within a minute of their write, or in the future. */
interface LastmodStatus {
  sections: { name: string; sampled: number; sameMinuteAsWrite: number; future: number }[];
}

/** What `healthOf` reads of the status document (src/admin/status.ts `siteStatus`); the crawler log and the lastmod sample may be missing. */
export interface HealthInput {
  site: string;
  configuration: { disabled: readonly { feature: string; variable: string; rule: string }[] };
  manifest: { partial: boolean; shards: number } | null;
  regeneration: { failed: readonly { document: string; error: string; attempts: number; retryAt: string }[] };
  notifications: readonly Record<string, unknown>[];
  mirrors: readonly { url: string; state: string; lastSyncedAt: string | null; lastError: string | null; lastErrorAt: string | null }[];
  searchConsole: {
    enabled: boolean;
    lastError: string | null;
    httpStatus: number | null;
    nextAttempt: string | null;
    sitemaps: readonly { path: string; errors: number | null; warnings: number | null; lastDownloaded: string | null; own: boolean }[];
  };
  robots: { originUrl: string | null; loop: string; loopLastSeenAt: string | null; problem: string | null };
  partitions: { databases: { problem: string | null } | null } | null;
  jobs: readonly {
    kind: string;
    target: string;
    partition?: number;
    state: string;
    error: string | null;
    attempts: number;
    lastRun: string | null;
    deadAt: string | null;
  }[];
  crawlers?: CrawlersStatus | null;
  lastmod?: LastmodStatus | null;
}

const DAY_MS = 86_400_000;
/** Crawler answers listed one by one; the rest are one item with their count. */
const CRAWLER_ERRORS_LISTED = 10;
/** Search Console sitemaps with errors (or warnings) listed one by one; the rest are one item. */
const SITEMAPS_LISTED = 5;
/** The lastmod sample says something from this many records of a section on. */
export const LASTMOD_MIN_SAMPLE = 20;

const ok = (status: number): boolean => (status >= 200 && status < 300) || status === 304;
const when = (iso: string | null | undefined): string => (iso ? iso.replace("T", " ").replace(/\.\d+Z$/, "Z") : "never");
const plural = (n: number, one: string, many = `${one}s`): string => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
/** The crawler log names the index `index` (src/crawlers/types.ts `CrawlerFetch.document`). */
const INDEX = "index";

/** What to do about a crawler given `status` for `document` (the log's name of it). */
function crawlerAction(document: string, status: number): string {
  if (document === "robots.txt") {
    return status >= 500
      ? "Google stops crawling the whole site while robots.txt answers 5xx: make the origin's robots.txt reachable from the Worker (ROBOTS_ORIGIN_URL, docs/notify.md) so a last good copy is kept and served in an outage."
      : "Crawlers read robots.txt before anything else: check ROBOTS_ORIGIN_URL and what the origin answers for it (docs/notify.md).";
  }
  if (status === 404 || status === 410) {
    return document === INDEX
      ? "The index is not served: check that a manifest is published (Sections below, Background jobs) and that the index path is the one submitted."
      : "The site no longer lists this document (a shard gone as the site shrank, or an old URL). Nothing breaks: crawlers drop it after re-reading the index. If it was submitted on its own (Search Console, a robots.txt Sitemap: line), remove it there.";
  }
  if (status >= 500) {
    return "The Worker could not serve it then (a manifest still being built, a database list that does not match, a store failing): see the other items here and Background jobs; crawlers retry. If it goes on, read the logs (wrangler tail).";
  }
  if (status === 401 || status === 403 || status === 429) {
    return "The crawler was refused or rate limited: check the rules in front of /sitemap* and /robots.txt (WAF, Bot Fight Mode, rate limiting, Access).";
  }
  if (status >= 300 && status < 400)
    return "Sitemaps should be served where they are listed, without a redirect: check the submitted URL and any redirect rule for /sitemap*.";
  return 'Check what answers this path for crawlers (docs/dashboard.md "Health").';
}

/** A 404/410 for a document the site no longer lists (not the index): nothing breaks, crawlers drop it (crawlerAction), so amber, not red. */
const isDroppedDocument = (fetch: DocumentFetchStatus): boolean => fetch.document !== INDEX && (fetch.status === 404 || fetch.status === 410);

function crawlerErrors(crawlers: CrawlersStatus): HealthItem[] {
  const errors: { crawler: string; fetch: DocumentFetchStatus }[] = [];
  for (const crawler of crawlers.crawlers) {
    for (const fetch of crawler.errors) {
      if (ok(fetch.status)) continue;
      // A later good answer for the same document (its last fetch) settles it.
      const last = crawler.documents.find((d) => d.document === fetch.document);
      if (last && ok(last.status) && Date.parse(last.at) > Date.parse(fetch.at)) continue;
      errors.push({ crawler: crawler.name, fetch });
    }
  }
  errors.sort((a, b) => Date.parse(b.fetch.at) - Date.parse(a.fetch.at));
  const items: HealthItem[] = errors.slice(0, CRAWLER_ERRORS_LISTED).map(({ crawler, fetch }) => ({
    level: isDroppedDocument(fetch) ? "amber" : "red",
    topic: "crawler",
    message: `${crawler} (verified) was given ${fetch.status} for ${fetch.path} at ${when(fetch.at)}.`,
    action: crawlerAction(fetch.document, fetch.status),
    document: fetch.path,
  }));
  const more = errors.length - CRAWLER_ERRORS_LISTED;
  if (more > 0) {
    items.push({
      level: errors.slice(CRAWLER_ERRORS_LISTED).every((e) => isDroppedDocument(e.fetch)) ? "amber" : "red",
      topic: "crawler",
      message: `and ${plural(more, "more answer")} to verified crawlers that ${more === 1 ? "was" : "were"} neither 2xx nor 304 in the last 7 days.`,
      action: "GET /sitemap-admin/status lists them (crawlers[].errors); each is one of the cases above.",
    });
  }
  return items;
}

/** Googlebot's last fetch of the index, when older than `staleDays` (or none in them). */
function indexNotFetched(status: HealthInput, crawlers: CrawlersStatus, now: number): HealthItem[] {
  if (!status.manifest || status.manifest.partial) return [];
  const googlebot = crawlers.crawlers.find((c) => c.name.toLowerCase() === "googlebot");
  if (!googlebot) return [];
  const days = crawlers.staleDays;
  // A log younger than the window cannot tell (a new deployment, a new site).
  if (crawlers.since === null || now - Date.parse(crawlers.since) < days * DAY_MS) return [];
  const action = `Submit ${status.site}/sitemap.xml in Search Console (Indexing › Sitemaps), check that robots.txt names it (a Sitemap: line) and that no rule in front of the Worker blocks Googlebot from /sitemap*.`;
  if (googlebot.index) {
    const age = now - Date.parse(googlebot.index.at);
    if (!(age > days * DAY_MS)) return [];
    return [
      {
        level: "amber",
        topic: "index",
        message: `Googlebot last fetched the index ${Math.floor(age / DAY_MS)} days ago (${when(googlebot.index.at)}), more than ${days} days.`,
        action,
        document: googlebot.index.path,
      },
    ];
  }
  // `index` is the last fetch in 7 days: beyond them, only the stale list can tell.
  if (days > 7 && !crawlers.stale.documents.includes(INDEX)) return [];
  return [
    {
      level: "amber",
      topic: "index",
      message: `Googlebot has not fetched the index in ${days} days.`,
      action,
      document: INDEX,
    },
  ];
}

function staleDocuments(crawlers: CrawlersStatus): HealthItem[] {
  const { count, documents } = crawlers.stale;
  if (count <= 0) return [];
  const shown = documents.slice(0, 3).join(", ");
  return [
    {
      level: "amber",
      topic: "stale",
      message: `${plural(count, "listed document")} no verified crawler fetched in ${crawlers.staleDays} days${shown ? ` (${shown}${count > 3 ? ", …" : ""})` : ""}.`,
      action:
        "Make sure the index is submitted (Search Console, Bing Webmaster Tools) and named in robots.txt; crawlers read a large index over days, so new shards can take a while. If nothing of the site is fetched, check that the rules in front of the Worker let verified bots through.",
      ...(documents[0] ? { document: documents[0] } : {}),
    },
  ];
}

/** A robots.txt answer's source saying it was the last good copy, not the origin's file of the moment. */
const LAST_GOOD = /last.?good/i;

/** robots.txt: the fetch of the origin's file loops back into this Worker, or a crawler was given something else than the origin's file. */
function robots(status: HealthInput, crawlers: CrawlersStatus | null): HealthItem[] {
  const r = status.robots;
  if (r.problem !== null) {
    return [
      {
        level: "red",
        topic: "robots",
        message: `robots.txt is not fetched from the origin: the fetch came back into this Worker (last seen ${when(r.loopLastSeenAt)}).`,
        action:
          "Set ROBOTS_ORIGIN_URL to the origin server's own robots.txt (or none) and deploy: until then /robots.txt answers its last good copy, else 503.",
        document: "/robots.txt",
      },
    ];
  }
  if (r.originUrl === null || !crawlers?.enabled) return [];
  const served = crawlers.crawlers
    .flatMap((c) => (c.robots && ok(c.robots.status) && LAST_GOOD.test(c.robots.source ?? "") ? [{ crawler: c.name, fetch: c.robots }] : []))
    .sort((a, b) => Date.parse(b.fetch.at) - Date.parse(a.fetch.at));
  const last = served[0];
  if (!last) return [];
  return [
    {
      level: "amber",
      topic: "robots",
      message: `robots.txt was served from its last good copy when ${last.crawler} fetched it at ${when(last.fetch.at)}: the origin (${r.originUrl}) did not answer it then.`,
      action:
        "Check that the origin answers ROBOTS_ORIGIN_URL quickly with 200 (ROBOTS_ORIGIN_TIMEOUT_MS); while it does not, crawlers get the last good copy, and without one a 503.",
      document: "/robots.txt",
    },
  ];
}

function configuration(status: HealthInput): HealthItem[] {
  const items: HealthItem[] = status.configuration.disabled.map((d) => ({
    level: "red",
    topic: "configuration",
    message: `${d.feature} is off: ${d.variable} ${d.rule}.`,
    action: `Fix ${d.variable} and deploy again; npm run check-config checks every variable before a deploy.`,
  }));
  const problem = status.partitions?.databases?.problem;
  if (problem) {
    items.push({
      level: "red",
      topic: "databases",
      message: `${problem}.`,
      action:
        "Restore SITE_DATABASES to the list deployed last (partitions.lock.json) and deploy: until then nothing of this site is written, moved, or read from its databases.",
    });
  }
  return items;
}

const jobName = (j: HealthInput["jobs"][number]): string =>
  `${j.kind} job${j.partition === undefined ? "" : ` (partition ${j.partition + 1})`}${j.kind === "mirror" ? ` of ${j.target}` : ""}`;

function jobs(status: HealthInput, level: HealthLevel): HealthItem[] {
  const state = level === "red" ? "dead" : "failing";
  return status.jobs
    .filter((j) => j.state === state)
    .map((j) => ({
      level,
      topic: "jobs",
      message:
        state === "dead"
          ? `The ${jobName(j)} is dead since ${when(j.deadAt)}: the queue gave up on it${j.error ? ` (${j.error})` : ""}.`
          : `The ${jobName(j)} is failing (${plural(j.attempts, "attempt")})${j.error ? `: ${j.error}` : ""}.`,
      action:
        state === "dead"
          ? "Fix what its error says (the logs: wrangler tail); the next heartbeat starts it again (docs/jobs.md)."
          : "The queue retries it with backoff; if it goes on failing, fix what its error says (docs/jobs.md).",
      ...(j.kind === "mirror" ? { document: j.target } : {}),
    }));
}

function mirrors(status: HealthInput): HealthItem[] {
  return status.mirrors
    .filter((m) => m.state === "failing")
    .map((m) => ({
      level: "red",
      topic: "mirrors",
      message: `The mirror of ${m.url} is failing since ${when(m.lastErrorAt)}${m.lastError ? `: ${m.lastError}` : ""}; last synced ${when(m.lastSyncedAt)}.`,
      action: "Check that the URL answers a sitemap or sitemap index (docs/mirror.md); its records stay as last synced, and the next run tries again.",
      document: m.url,
    }));
}

function searchConsole(status: HealthInput, level: HealthLevel): HealthItem[] {
  const g = status.searchConsole;
  if (!g.enabled) return [];
  const field = level === "red" ? "errors" : "warnings";
  const flagged = g.sitemaps.filter((m) => m.own && (m[field] ?? 0) > 0);
  const items: HealthItem[] = flagged.slice(0, SITEMAPS_LISTED).map((m) => ({
    level,
    topic: "search-console",
    message: `Search Console reports ${plural(m[field] ?? 0, field.slice(0, -1))} in ${m.path} (downloaded ${when(m.lastDownloaded)}).`,
    action: `Open the sitemap's report in Search Console (Indexing › Sitemaps) to see which entries; fix them at the source, then resubmit it.`,
    document: m.path,
  }));
  if (flagged.length > SITEMAPS_LISTED) {
    items.push({
      level,
      topic: "search-console",
      message: `and ${plural(flagged.length - SITEMAPS_LISTED, "more sitemap")} with ${field} in Search Console.`,
      action: "The Search Console table below lists them.",
    });
  }
  if (level === "amber" && g.lastError) {
    items.push({
      level: "amber",
      topic: "search-console",
      message: `Search Console could not be read${g.httpStatus !== null ? ` (HTTP ${g.httpStatus})` : ""}: ${g.lastError}.${g.nextAttempt ? ` Next attempt ${when(g.nextAttempt)}.` : ""}`,
      action:
        g.httpStatus === 403
          ? "Add the service account (GSC_SERVICE_ACCOUNT's client_email) as a user of the property (GSC_PROPERTY) in Search Console."
          : "It is retried with backoff; the last good answer is shown meanwhile.",
    });
  }
  return items;
}

function regenerationFailed(status: HealthInput): HealthItem[] {
  const failed = status.regeneration.failed;
  const first = failed[0];
  if (!first) return [];
  return [
    {
      level: "amber",
      topic: "regeneration",
      message: `${plural(failed.length, "document")} could not be stored and ${failed.length === 1 ? "is" : "are"} served live (${first.document}: ${first.error}).`,
      action: `It is retried by itself (next ${when(first.retryAt)}); if it goes on, check the SNAPSHOTS binding (KV) and its limits (docs/regeneration.md).`,
      document: first.document,
    },
  ];
}

function notifications(status: HealthInput): HealthItem[] {
  return status.notifications.flatMap((n): HealthItem[] => {
    const { target, lastError, failures, retired } = n as { target?: unknown; lastError?: unknown; failures?: unknown; retired?: unknown };
    if (retired === true || typeof lastError !== "string" || typeof failures !== "number" || failures <= 0) return [];
    return [
      {
        level: "amber",
        topic: "notifications",
        message: `Telling ${String(target)} about changes fails (${plural(failures, "failure")}): ${lastError}.`,
        action: "Check its settings (docs/notify.md); it retries with backoff.",
      },
    ];
  });
}

function lastmod(status: HealthInput): HealthItem[] {
  const sample = status.lastmod ?? null;
  if (!sample) return [];
  return sample.sections.flatMap((s): HealthItem[] => {
    const items: HealthItem[] = [];
    if (s.sampled >= LASTMOD_MIN_SAMPLE && s.sameMinuteAsWrite * 2 > s.sampled) {
      items.push({
        level: "amber",
        topic: "lastmod",
        message: `In section ${s.name}, ${s.sameMinuteAsWrite} of ${s.sampled} recent records carry a lastmod within a minute of their write: it looks like the time of the write, not of the page's change.`,
        action:
          "Send the date the page's content last changed (or no lastmod) rather than the time of the write: search engines ignore a lastmod that is always now.",
      });
    }
    if (s.future > 0) {
      items.push({
        level: "amber",
        topic: "lastmod",
        message: `In section ${s.name}, ${s.future} of ${s.sampled} recent records carry a lastmod in the future.`,
        action: "Check the source's clock and time zone (a local time sent as UTC): a lastmod in the future makes search engines distrust them all.",
      });
    }
    return items;
  });
}

function noManifest(status: HealthInput): HealthItem[] {
  if (status.manifest !== null || status.partitions?.databases?.problem) return [];
  return [
    {
      level: "amber",
      topic: "manifest",
      message: "No sitemap is published for this site yet.",
      action: "Add records (PUT /sitemap-admin/urls, a sync, or a mirror): the regeneration publishes them. If records exist, Regenerate now.",
    },
  ];
}

/** The site's problems, red first; empty when none is found. */
export function healthOf(status: HealthInput, now: number): HealthItem[] {
  const crawlers = status.crawlers?.enabled ? status.crawlers : null;
  const items = [
    ...(crawlers ? crawlerErrors(crawlers) : []),
    ...robots(status, crawlers),
    ...configuration(status),
    ...jobs(status, "red"),
    ...mirrors(status),
    ...searchConsole(status, "red"),
    ...(crawlers ? indexNotFetched(status, crawlers, now) : []),
    ...(crawlers ? staleDocuments(crawlers) : []),
    ...searchConsole(status, "amber"),
    ...jobs(status, "amber"),
    ...regenerationFailed(status),
    ...notifications(status),
    ...(crawlers ? rangeErrors(crawlers, when) : []),
    ...lastmod(status),
    ...noManifest(status),
  ];
  // Stable: red before amber, each in the order above.
  return [...items.filter((i) => i.level === "red"), ...items.filter((i) => i.level === "amber")];
}
