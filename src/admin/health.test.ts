import { describe, expect, it } from "vitest";
import type { CrawlersStatus, DocumentFetchStatus } from "../crawlers/types.ts";
import { type HealthInput, LASTMOD_MIN_SAMPLE, healthOf } from "./health.ts";

const NOW = Date.UTC(2026, 2, 1, 12);
const DAY = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString();

const fetched = (document: string, path: string, ago: number, status = 200, source: string | null = "snapshot"): DocumentFetchStatus => ({
  document,
  path,
  at: iso(NOW - ago),
  status,
  bytes: 100,
  source,
});

type Crawler = CrawlersStatus["crawlers"][number];
const crawler = (over: Partial<Crawler> = {}): Crawler => ({
  name: "googlebot",
  requests: { verified24h: 1, verified7d: 1, unverified24h: 0, unverified7d: 0 },
  index: fetched("index", "/sitemap.xml", 3_600_000),
  robots: fetched("robots.txt", "/robots.txt", 3_600_000, 200, null),
  sections: [{ section: "pages", shards: 2, fetched: 2, last: fetched("pages-2", "/sitemap-pages-2.xml", 3_600_000) }],
  errors: [],
  documents: [],
  ...over,
});

const log = (over: Partial<CrawlersStatus> = {}): CrawlersStatus => ({
  enabled: true,
  staleDays: 14,
  since: iso(NOW - 30 * DAY),
  ranges: [
    {
      name: "googlebot",
      url: "https://ranges.example/googlebot.json",
      prefixes: 300,
      refused: [],
      fetchedAt: iso(NOW - DAY),
      checkedAt: iso(NOW - DAY),
      error: null,
    },
  ],
  crawlers: [crawler()],
  stale: { count: 0, documents: [] },
  ...over,
});

/** A site with nothing wrong. */
const healthy = (over: Partial<HealthInput> = {}): HealthInput => ({
  site: "https://www.example.com",
  configuration: { disabled: [] },
  manifest: { partial: false, shards: 2 },
  regeneration: { failed: [] },
  notifications: [{ target: "indexnow", lastError: null, failures: 0, retired: false }],
  mirrors: [{ url: "https://remote.example/sitemap.xml", state: "idle", lastSyncedAt: iso(NOW - DAY), lastError: null, lastErrorAt: null }],
  searchConsole: {
    enabled: true,
    lastError: null,
    httpStatus: 200,
    nextAttempt: null,
    sitemaps: [{ path: "https://www.example.com/sitemap.xml", errors: 0, warnings: 0, lastDownloaded: iso(NOW - DAY), own: true }],
  },
  robots: { originUrl: "https://origin.example/robots.txt", loop: "none", loopLastSeenAt: null, problem: null },
  partitions: null,
  jobs: [{ kind: "regenerate", target: "https://www.example.com", state: "idle", error: null, attempts: 0, lastRun: iso(NOW), deadAt: null }],
  crawlers: log(),
  lastmod: { sections: [{ name: "pages", sampled: 100, sameMinuteAsWrite: 10, future: 0 }] },
  ...over,
});

const topics = (input: HealthInput) => healthOf(input, NOW).map((i) => `${i.level} ${i.topic}`);

describe("healthOf", () => {
  it("finds nothing wrong with a healthy site, with or without the crawler log and the lastmod sample", () => {
    expect(healthOf(healthy(), NOW)).toEqual([]);
    expect(healthOf(healthy({ crawlers: undefined, lastmod: undefined }), NOW)).toEqual([]);
    expect(healthOf(healthy({ crawlers: null, lastmod: null }), NOW)).toEqual([]);
    // A log that is off (no D1) says nothing, whatever it holds.
    expect(healthOf(healthy({ crawlers: log({ enabled: false, stale: { count: 5, documents: ["index"] } }) }), NOW)).toEqual([]);
  });

  it("a verified crawler given a 404 for the index is red and first; for a document the site no longer lists it is amber (its own text says nothing breaks)", () => {
    const index = fetched("index", "/sitemap.xml", 30_000, 404, null);
    const gone = fetched("pages-3", "/sitemap-pages-3.xml", 60_000, 404, null);
    const items = healthOf(
      healthy({
        jobs: [{ kind: "notify", target: "x", state: "failing", error: "boom", attempts: 3, lastRun: null, deadAt: null }],
        crawlers: log({ crawlers: [crawler({ errors: [index, gone], documents: [index, gone] })] }),
      }),
      NOW,
    );
    expect(items[0]).toMatchObject({
      level: "red",
      topic: "crawler",
      document: "/sitemap.xml",
      action: expect.stringContaining("The index is not served"),
    });
    const shard = items.find((i) => i.document === "/sitemap-pages-3.xml");
    expect(shard).toEqual({
      level: "amber",
      topic: "crawler",
      message: "googlebot (verified) was given 404 for /sitemap-pages-3.xml at 2026-03-01 11:59:00Z.",
      action: expect.stringContaining("Nothing breaks"),
      document: "/sitemap-pages-3.xml",
    });
    // No red item says "Nothing breaks".
    for (const item of items) if (item.level === "red") expect(item.action).not.toContain("Nothing breaks");
    expect(items.map((i) => i.level)).toEqual(["red", "amber", "amber"]);
  });

  it("a 503 for robots.txt says what it does to crawling; a later good answer for the same document settles an error", () => {
    const outage = fetched("robots.txt", "/robots.txt", 2 * 3_600_000, 503, null);
    const [item] = healthOf(healthy({ crawlers: log({ crawlers: [crawler({ errors: [outage] })] }) }), NOW);
    expect(item).toMatchObject({ level: "red", topic: "crawler", message: expect.stringContaining("503 for /robots.txt") });
    expect(item!.action).toContain("ROBOTS_ORIGIN_URL");
    const settled = crawler({ errors: [outage], documents: [fetched("robots.txt", "/robots.txt", 60_000, 200)] });
    expect(healthOf(healthy({ crawlers: log({ crawlers: [settled] }) }), NOW)).toEqual([]);
  });

  it("lists ten crawler errors, newest first, then one item with the count of the rest", () => {
    const errors = Array.from({ length: 14 }, (_, i) => fetched(`pages-${i + 10}`, `/sitemap-pages-${i + 10}.xml`, (i + 1) * 60_000, 404, null));
    const items = healthOf(healthy({ crawlers: log({ crawlers: [crawler({ errors: errors.slice().reverse() })] }) }), NOW);
    expect(items).toHaveLength(11);
    expect(items[0]!.document).toBe("/sitemap-pages-10.xml");
    expect(items[10]!.message).toBe("and 4 more answers to verified crawlers that were neither 2xx nor 304 in the last 7 days.");
  });

  it("the index not fetched by Googlebot in staleDays is amber (only with the log on and a published manifest)", () => {
    const old = log({ crawlers: [crawler({ index: fetched("index", "/sitemap.xml", 20 * DAY) })] });
    expect(healthOf(healthy({ crawlers: old }), NOW)).toEqual([
      expect.objectContaining({ level: "amber", topic: "index", message: expect.stringContaining("Googlebot last fetched the index 20 days ago") }),
    ]);
    // None in 7 days: beyond them only the stale list (no verified crawler in staleDays) tells.
    const none = (stale: string[], staleDays = 14) =>
      topics(healthy({ crawlers: log({ staleDays, crawlers: [crawler({ index: null })], stale: { count: stale.length, documents: stale } }) }));
    expect(none([])).toEqual([]);
    expect(none(["index"])).toEqual(["amber index", "amber stale"]);
    expect(none([], 5)).toEqual(["amber index"]);
    expect(topics(healthy({ manifest: null, crawlers: old }))).toEqual(["amber manifest"]);
    expect(topics(healthy({ crawlers: { ...old, crawlers: [{ ...old.crawlers[0]!, name: "bingbot" }] } }))).toEqual([]);
    // A log younger than the window (a new deployment) cannot say "not in 14 days".
    expect(topics(healthy({ crawlers: { ...old, since: iso(NOW - 3 * DAY) } }))).toEqual([]);
  });

  it("listed documents no verified crawler fetched are one amber item with their count", () => {
    const [item] = healthOf(healthy({ crawlers: log({ stale: { count: 1_258, documents: ["pages-3", "pages-4", "pages-5", "pages-6"] } }) }), NOW);
    expect(item).toMatchObject({ level: "amber", topic: "stale", document: "pages-3" });
    expect(item!.message).toBe("1,258 listed documents no verified crawler fetched in 14 days (pages-3, pages-4, pages-5, …).");
  });

  it("robots.txt: a loop is red; the last good copy served to a crawler is amber (only when an origin is configured)", () => {
    const loop = {
      originUrl: "https://www.example.com/robots.txt",
      loop: "seen",
      loopLastSeenAt: iso(NOW - 60_000),
      problem: "the robots.txt fetch came back",
    };
    expect(healthOf(healthy({ robots: loop }), NOW)).toEqual([
      expect.objectContaining({ level: "red", topic: "robots", action: expect.stringContaining("ROBOTS_ORIGIN_URL") }),
    ]);
    const lastGood = log({ crawlers: [crawler({ robots: fetched("robots.txt", "/robots.txt", 60_000, 200, "last-good") })] });
    expect(topics(healthy({ crawlers: lastGood }))).toEqual(["amber robots"]);
    expect(topics(healthy({ crawlers: lastGood, robots: { ...healthy().robots, originUrl: null } }))).toEqual([]);
    // The loop says it all: not twice.
    expect(topics(healthy({ crawlers: lastGood, robots: loop }))).toEqual(["red robots"]);
  });

  it("Search Console: errors red, warnings amber, per own sitemap (five, then a count); a failed read amber", () => {
    const gsc = healthy().searchConsole;
    const sitemap = (n: number, errors: number | null, warnings: number | null, own = true) => ({
      path: `https://www.example.com/sitemap-pages-${n}.xml`,
      errors,
      warnings,
      lastDownloaded: null,
      own,
    });
    const items = healthOf(
      healthy({
        searchConsole: {
          ...gsc,
          sitemaps: [...Array.from({ length: 7 }, (_, i) => sitemap(i + 1, 2, 0)), sitemap(8, 0, 3), sitemap(9, null, null), sitemap(10, 9, 9, false)],
        },
      }),
      NOW,
    );
    expect(items.map((i) => `${i.level} ${i.document ?? "-"}`)).toEqual([
      ...Array.from({ length: 5 }, (_, i) => `red https://www.example.com/sitemap-pages-${i + 1}.xml`),
      "red -",
      "amber https://www.example.com/sitemap-pages-8.xml",
    ]);
    expect(items[0]!.message).toBe("Search Console reports 2 errors in https://www.example.com/sitemap-pages-1.xml (downloaded never).");
    expect(items[5]!.message).toBe("and 2 more sitemaps with errors in Search Console.");
    const denied = healthOf(healthy({ searchConsole: { ...gsc, lastError: "HTTP 403", httpStatus: 403, nextAttempt: iso(NOW + 3_600_000) } }), NOW);
    expect(denied).toEqual([expect.objectContaining({ level: "amber", topic: "search-console", action: expect.stringContaining("service account") })]);
    expect(healthOf(healthy({ searchConsole: { ...gsc, enabled: false, sitemaps: [sitemap(1, 5, 5)] } }), NOW)).toEqual([]);
  });

  it("a failing mirror, a dead job, a bad variable and a database list that does not match are red; a failing job amber", () => {
    const items = healthOf(
      healthy({
        mirrors: [
          { url: "https://remote.example/sitemap.xml", state: "failing", lastSyncedAt: null, lastError: "HTTP 500", lastErrorAt: iso(NOW - 60_000) },
        ],
        jobs: [
          {
            kind: "regenerate",
            target: "https://www.example.com",
            partition: 1,
            state: "dead",
            error: "D1 is down",
            attempts: 5,
            lastRun: null,
            deadAt: iso(NOW),
          },
          { kind: "mirror", target: "https://remote.example/sitemap.xml", state: "failing", error: "HTTP 500", attempts: 2, lastRun: null, deadAt: null },
        ],
        configuration: { disabled: [{ feature: "indexnow", variable: "INDEXNOW_KEY", rule: "must be 8 to 128 characters" }] },
        partitions: { databases: { problem: "SITE_DATABASES lists PART_C where PART_B was" } },
        manifest: null,
      }),
      NOW,
    );
    expect(items.map((i) => `${i.level} ${i.topic}`)).toEqual(["red configuration", "red databases", "red jobs", "red mirrors", "amber jobs"]);
    expect(items[0]!.message).toBe("indexnow is off: INDEXNOW_KEY must be 8 to 128 characters.");
    expect(items[2]!.message).toBe("The regenerate job (partition 2) is dead since 2026-03-01 12:00:00Z: the queue gave up on it (D1 is down).");
    expect(items[3]!.message).toContain("last synced never");
    expect(items[4]!.message).toBe("The mirror job of https://remote.example/sitemap.xml is failing (2 attempts): HTTP 500.");
  });

  it("a list holding implausibly wide prefixes is an amber ranges item naming them", () => {
    const ranges = [
      {
        name: "googlebot",
        url: "https://ranges.example/g.json",
        prefixes: 3,
        refused: ["0.0.0.0/0"],
        fetchedAt: iso(NOW),
        checkedAt: iso(NOW),
        error: null,
      },
    ];
    const [item, ...rest] = healthOf(healthy({ crawlers: log({ ranges }) }), NOW);
    expect(rest).toEqual([]);
    expect(item).toMatchObject({ level: "amber", topic: "ranges", document: "https://ranges.example/g.json" });
    expect(item!.message).toContain("0.0.0.0/0");
  });

  it("documents failing to store, a failing notification target and a range refresh error are amber; ranges never fetched are red", () => {
    const items = healthOf(
      healthy({
        regeneration: { failed: [{ document: "pages-2", error: "KV put failed", attempts: 2, retryAt: iso(NOW + 60_000) }] },
        notifications: [{ target: "indexnow", lastError: "HTTP 429", failures: 2, retired: false }],
        crawlers: log({
          ranges: [
            {
              name: "googlebot",
              url: "https://ranges.example/g.json",
              prefixes: 300,
              refused: [],
              fetchedAt: iso(NOW - DAY),
              checkedAt: iso(NOW),
              error: "HTTP 500",
            },
            { name: "bingbot", url: "https://ranges.example/b.json", prefixes: 0, refused: [], fetchedAt: null, checkedAt: iso(NOW), error: "timeout" },
          ],
        }),
      }),
      NOW,
    );
    expect(items.map((i) => `${i.level} ${i.topic}`)).toEqual(["red ranges", "amber regeneration", "amber notifications", "amber ranges"]);
    expect(items[1]!.message).toBe("1 document could not be stored and is served live (pages-2: KV put failed).");
  });

  it(`lastmod: amber when most of ≥ ${LASTMOD_MIN_SAMPLE} sampled records carry it within a minute of their write, or any lies in the future`, () => {
    const of = (sections: { name: string; sampled: number; sameMinuteAsWrite: number; future: number }[]) => topics(healthy({ lastmod: { sections } }));
    expect(of([{ name: "pages", sampled: 20, sameMinuteAsWrite: 11, future: 0 }])).toEqual(["amber lastmod"]);
    expect(of([{ name: "pages", sampled: 20, sameMinuteAsWrite: 10, future: 0 }])).toEqual([]);
    expect(of([{ name: "pages", sampled: 19, sameMinuteAsWrite: 19, future: 0 }])).toEqual([]);
    expect(of([{ name: "pages", sampled: 3, sameMinuteAsWrite: 0, future: 1 }])).toEqual(["amber lastmod"]);
    expect(of([{ name: "blog", sampled: 40, sameMinuteAsWrite: 40, future: 2 }])).toEqual(["amber lastmod", "amber lastmod"]);
    const [item] = healthOf(healthy({ lastmod: { sections: [{ name: "blog", sampled: 40, sameMinuteAsWrite: 39, future: 0 }] } }), NOW);
    expect(item!.message).toContain("In section blog, 39 of 40 recent records");
  });
});
