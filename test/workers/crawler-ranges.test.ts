/**
 * Issue 43 item 1, verification: the crawlers' published IP ranges (CRAWLER_IP_RANGES) read from the
 * engines' format, matched against a client address (IPv4, IPv6, IPv4-mapped), the crawler a
 * User-Agent claims and how it is verified (its ranges, or Cloudflare's verified-bot flag), the
 * ranges kept in real KV, cached per isolate, and refreshed by the `crawler-ranges` job through the
 * real consumer: at the first heartbeat, then not again within 24 h; a 500, a bad body or a timeout
 * keeps the prefixes there were. The engines are faked at the fetch boundary.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KvCrawlerRangeStore } from "../../src/adapters/kv/crawler-range-store.ts";
import { USER_AGENT } from "../../src/core/user-agent.ts";
import { claimedCrawler, verification } from "../../src/crawlers/identify.ts";
import { rangeMatcher } from "../../src/crawlers/range-cache.ts";
import { rangesStatus } from "../../src/crawlers/range-status.ts";
import type { CrawlerRangeStore, StoredRanges } from "../../src/crawlers/range-store.ts";
import { RangeFileError, SHORTEST_PREFIX, compileRanges, parseRangeFile, parseRangeList } from "../../src/crawlers/ranges.ts";
import { REFRESH_EVERY_MS, describeRefresh, refreshCrawlerRanges } from "../../src/crawlers/refresh.ts";
import { services } from "../../src/services.ts";
import { runCron } from "./support/jobs.ts";
import { freshOrigin } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const HOUR = 3600_000;
const T0 = Date.UTC(2026, 10, 20, 12);

/** A list as Google publishes it (googlebot.json), abridged. */
const GOOGLE = JSON.stringify({
  creationTime: "2026-11-19T14:46:08.000000",
  prefixes: [
    { ipv6Prefix: "2001:4860:4801:10::/64" },
    { ipv6Prefix: "2001:4860:4801:12::/64" },
    { ipv4Prefix: "66.249.64.0/27" },
    { ipv4Prefix: "66.249.66.0/24" },
  ],
});
/** As Bing publishes it (bingbot.json), abridged. */
const BING = JSON.stringify({ creationTime: "2026-11-01T00:00:00", prefixes: [{ ipv4Prefix: "157.55.39.0/24" }, { ipv4Prefix: "207.46.13.0/24" }] });

const GOOGLEBOT_UA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const BINGBOT_UA = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)";

let names = 0;
/** Crawler names of their own per test: every test of this file shares one KV namespace. */
const fresh = (label: string): string => `${label}-${++names}-${Math.random().toString(36).slice(2, 6)}`;

describe("parseRangeFile", () => {
  it("reads the engines' format: IPv4 and IPv6 prefixes, other keys ignored, canonical and without repeats", () => {
    expect(parseRangeFile(GOOGLE)).toEqual(["2001:4860:4801:10::/64", "2001:4860:4801:12::/64", "66.249.64.0/27", "66.249.66.0/24"]);
    expect(parseRangeFile(BING)).toEqual(["157.55.39.0/24", "207.46.13.0/24"]);
    const written = JSON.stringify({
      prefixes: [
        { ipv6Prefix: "2001:0DB8:0000:0000::/32" },
        { ipv4Prefix: " 66.249.64.7/27 " },
        { ipv4Prefix: "66.249.64.0/27" },
        { ipv6Prefix: "::ffff:0:0/96" },
      ],
    });
    // Host bits cleared, IPv6 as RFC 5952 writes it, a repeat once.
    expect(parseRangeFile(written)).toEqual(["2001:db8::/32", "66.249.64.0/27", "::ffff:0:0/96"]);
  });

  it("skips entries that are no prefix of their kind, and refuses a file with none", () => {
    const mixed = JSON.stringify({
      prefixes: [
        { ipv4Prefix: "66.249.64.0/33" },
        { ipv4Prefix: "2001:db8::/32" },
        { ipv6Prefix: "66.249.64.0/24" },
        { ipv4Prefix: "0x42.249.64.0/24" },
        { ipv4Prefix: "66.249.64.0" },
        { ipv6Prefix: "fe80::1%eth0/64" },
        { other: "1.2.3.0/24" },
        "1.2.3.0/24",
        null,
        { ipv4Prefix: "192.0.2.0/24" },
      ],
    });
    expect(parseRangeFile(mixed)).toEqual(["192.0.2.0/24"]);
    for (const body of [
      "",
      "<html>Service Unavailable</html>",
      "null",
      "[]",
      JSON.stringify({}),
      JSON.stringify({ prefixes: "66.249.64.0/27" }),
      JSON.stringify({ prefixes: [] }),
      JSON.stringify({ prefixes: [{ ipv4Prefix: "not an address" }] }),
    ]) {
      expect(() => parseRangeFile(body), body).toThrow(RangeFileError);
    }
    expect(() => parseRangeFile("{")).toThrow("not JSON");
    expect(() => parseRangeFile(JSON.stringify({ prefixes: [] }))).toThrow("no valid IP prefix");
  });
});

describe("the matcher", () => {
  const matcher = compileRanges([
    { name: "googlebot", prefixes: parseRangeFile(GOOGLE) },
    { name: "bingbot", prefixes: parseRangeFile(BING) },
  ]);

  it("finds IPv4 addresses in and out of range", () => {
    expect(matcher.crawlerOf("66.249.64.0")).toBe("googlebot");
    expect(matcher.crawlerOf("66.249.64.31")).toBe("googlebot");
    expect(matcher.crawlerOf("66.249.64.32")).toBeNull();
    expect(matcher.crawlerOf("66.249.66.200")).toBe("googlebot");
    expect(matcher.crawlerOf("66.249.67.1")).toBeNull();
    expect(matcher.crawlerOf("157.55.39.77")).toBe("bingbot");
    expect(matcher.crawlerOf("203.0.113.9")).toBeNull();
  });

  it("finds IPv6 addresses in and out of range, however written", () => {
    expect(matcher.crawlerOf("2001:4860:4801:10::1")).toBe("googlebot");
    expect(matcher.crawlerOf("2001:4860:4801:0010:ffff:ffff:ffff:ffff")).toBe("googlebot");
    expect(matcher.crawlerOf("2001:4860:4801:11::1")).toBeNull();
    expect(matcher.crawlerOf("2001:4860:4801:12:abcd::")).toBe("googlebot");
    expect(matcher.crawlerOf("2001:db8::1")).toBeNull();
  });

  it("takes an IPv4-mapped IPv6 address for its IPv4 address", () => {
    expect(matcher.crawlerOf("::ffff:66.249.64.5")).toBe("googlebot");
    expect(matcher.crawlerOf("::ffff:42f9:4005")).toBe("googlebot");
    expect(matcher.crawlerOf("::ffff:157.55.39.1")).toBe("bingbot");
    expect(matcher.crawlerOf("::ffff:66.249.65.5")).toBeNull();
  });

  it("says whose range it is: an address in another crawler's ranges is not this one's", () => {
    expect(matcher.has("googlebot", "66.249.64.5")).toBe(true);
    expect(matcher.has("bingbot", "66.249.64.5")).toBe(false);
    expect(matcher.has("googlebot", "157.55.39.1")).toBe(false);
    expect(matcher.has("yandex", "66.249.64.5")).toBe(false);
  });

  it("answers null for anything that is not an address", () => {
    for (const ip of ["", "unknown", "66.249.64", "0x42.0xf9.64.5", "1123631109", "66.249.64.5:443", "2001:4860:4801:10::1/64", "::g"]) {
      expect(matcher.crawlerOf(ip), ip).toBeNull();
      expect(matcher.has("googlebot", ip), ip).toBe(false);
    }
    expect(compileRanges([]).crawlerOf("66.249.64.5")).toBeNull();
  });
});

describe("claimedCrawler", () => {
  const configured = ["googlebot", "bingbot"];

  it("is the first configured name the User-Agent holds, in any case", () => {
    expect(claimedCrawler(GOOGLEBOT_UA, configured)).toBe("googlebot");
    expect(claimedCrawler("Googlebot-Image/1.0", configured)).toBe("googlebot");
    expect(claimedCrawler(BINGBOT_UA, configured)).toBe("bingbot");
    expect(claimedCrawler("MOZILLA (BINGBOT)", configured)).toBe("bingbot");
    expect(claimedCrawler("googlebot bingbot", ["bingbot", "googlebot"])).toBe("bingbot");
  });

  it("is null for a browser, no User-Agent, or no names", () => {
    expect(claimedCrawler("Mozilla/5.0 (X11; Linux x86_64) Chrome/150.0", configured)).toBeNull();
    expect(claimedCrawler(null, configured)).toBeNull();
    expect(claimedCrawler("", configured)).toBeNull();
    expect(claimedCrawler(GOOGLEBOT_UA, [])).toBeNull();
  });
});

describe("implausibly wide prefixes (issue 50: a range file with 0.0.0.0/0 verified every address)", () => {
  // Every prefix length of both kinds, each in a list beside one plausible network.
  const cases = [
    ...Array.from({ length: 33 }, (_, n) => ({ prefix: `64.0.0.0/${n}`, wide: n < SHORTEST_PREFIX.ipv4, probe: "64.0.0.0" })),
    ...Array.from({ length: 129 }, (_, n) => ({ prefix: `2001::/${n}`, wide: n < SHORTEST_PREFIX.ipv6, probe: "2001::" })),
  ];
  it.each(cases)("$prefix: refused when shorter than /8 (IPv4) or /32 (IPv6), and then verifies nothing", ({ prefix, wide, probe }) => {
    const body = JSON.stringify({ prefixes: [{ [prefix.includes(":") ? "ipv6Prefix" : "ipv4Prefix"]: prefix }, { ipv4Prefix: "192.0.2.0/24" }] });
    const { prefixes, refused } = parseRangeList(body);
    const canonical = prefix.includes(":")
      ? prefixes.concat(refused).find((p) => p.includes(":"))!
      : prefixes.concat(refused).find((p) => !p.startsWith("192."))!;
    expect(refused.includes(canonical)).toBe(wide);
    expect(prefixes.includes(canonical)).toBe(!wide);
    // Even a stored list that holds one (written before this rule) verifies nothing by it.
    const matcher = compileRanges([{ name: "googlebot", prefixes: [...prefixes, ...refused] }]);
    expect(matcher.has("googlebot", probe)).toBe(!wide);
    expect(matcher.has("googlebot", "192.0.2.9")).toBe(true);
  });

  it("a list of nothing but 0.0.0.0/0 and ::/0 is refused whole, saying why", () => {
    expect(() => parseRangeList(JSON.stringify({ prefixes: [{ ipv4Prefix: "0.0.0.0/0" }, { ipv6Prefix: "::/0" }] }))).toThrow(/implausibly wide/);
  });
});

describe("verification", () => {
  const matcher = compileRanges([
    { name: "googlebot", prefixes: parseRangeFile(GOOGLE) },
    { name: "bingbot", prefixes: parseRangeFile(BING) },
  ]);
  /** A request as the Worker gets it, with `cf` as Cloudflare fills it (or not). */
  const request = (ip: string | null, cf?: object): Request =>
    new Request("https://example.com/sitemap.xml", {
      headers: { "User-Agent": GOOGLEBOT_UA, ...(ip === null ? {} : { "CF-Connecting-IP": ip }) },
      ...(cf ? { cf } : {}),
    }) as unknown as Request;

  it('is "ip" for an address in the claimed crawler\'s ranges (IPv4, IPv6, mapped)', () => {
    expect(verification(request("66.249.64.5"), "googlebot", matcher)).toBe("ip");
    expect(verification(request("2001:4860:4801:10::7"), "googlebot", matcher)).toBe("ip");
    expect(verification(request("::ffff:66.249.66.1"), "googlebot", matcher)).toBe("ip");
  });

  it('is "cloudflare" for the "Search Engine Crawler" category, and only for a crawler whose list is not loaded', () => {
    const bingOnly = compileRanges([{ name: "bingbot", prefixes: parseRangeFile(BING) }]);
    expect(verification(request("203.0.113.9", { verifiedBotCategory: "Search Engine Crawler" }), "googlebot", bingOnly)).toBe("cloudflare");
    // No ranges stored yet: the flag alone.
    expect(verification(request(null, { verifiedBotCategory: "Search Engine Crawler" }), "googlebot", null)).toBe("cloudflare");
    // Google's list is loaded: its addresses alone decide, whatever the flag says.
    expect(verification(request("203.0.113.9", { verifiedBotCategory: "Search Engine Crawler" }), "googlebot", matcher)).toBeNull();
  });

  it("is null for any other category, Bot Management's flag alone, or nothing", () => {
    for (const category of ["", "Monitoring & Analytics", "AI Crawler", "Page Preview", "search engine crawler", "Search Engine Optimization"]) {
      expect(verification(request("203.0.113.9", { verifiedBotCategory: category }), "googlebot", null), category).toBeNull();
    }
    expect(verification(request("203.0.113.9", { botManagement: { verifiedBot: true, score: 99 } }), "googlebot", null)).toBeNull();
    expect(verification(request("203.0.113.9"), "googlebot", matcher)).toBeNull();
    expect(verification(request("203.0.113.9", {}), "googlebot", matcher)).toBeNull();
    expect(verification(request("203.0.113.9", { botManagement: null }), "googlebot", matcher)).toBeNull();
    expect(verification(request(null), "googlebot", matcher)).toBeNull();
    expect(verification(request("66.249.64.5"), "googlebot", null)).toBeNull();
  });

  it("never verifies a Googlebot User-Agent from Bing's ranges", () => {
    expect(verification(request("157.55.39.1"), "googlebot", matcher)).toBeNull();
    expect(verification(request("157.55.39.1", { verifiedBotCategory: "Search Engine Crawler" }), "googlebot", matcher)).toBeNull();
    expect(verification(request("157.55.39.1"), "bingbot", matcher)).toBe("ip");
  });
});

describe("the store in KV", () => {
  it("keeps one key per crawler under its own prefix, and ignores a damaged value", async () => {
    const store = new KvCrawlerRangeStore(env.SNAPSHOTS);
    const name = fresh("store");
    const list: StoredRanges = { name, url: "https://engine.test/list.json", prefixes: ["66.249.64.0/27"], fetchedAt: T0, checkedAt: T0, error: null };
    await store.save(list);
    expect((await store.loadAll()).find((l) => l.name === name)).toEqual(list);
    const keys = (await env.SNAPSHOTS.list({ prefix: "crawler-ranges/1/" })).keys.map((k) => k.name);
    expect(keys).toContain(`crawler-ranges/1/${name}`);
    // Nothing of the snapshots' or robots.txt's key spaces.
    expect(keys.every((k) => !k.startsWith("s1/") && !k.startsWith("robots/"))).toBe(true);

    await store.save({ ...list, prefixes: ["66.249.64.0/27", "66.249.66.0/24"], checkedAt: T0 + HOUR, error: "HTTP 500" });
    expect((await store.loadAll()).find((l) => l.name === name)).toMatchObject({ prefixes: ["66.249.64.0/27", "66.249.66.0/24"], error: "HTTP 500" });
    await env.SNAPSHOTS.put(`crawler-ranges/1/${name}`, "{not json");
    expect((await store.loadAll()).find((l) => l.name === name)).toBeUndefined();
    await env.SNAPSHOTS.put(`crawler-ranges/1/${name}`, JSON.stringify({ url: 1 }));
    expect((await store.loadAll()).find((l) => l.name === name)).toBeUndefined();
  });
});

/** A store in memory that can be made to fail, counting loads. */
class MemoryStore implements CrawlerRangeStore {
  readonly lists = new Map<string, StoredRanges>();
  loads = 0;
  failing = false;

  async loadAll(): Promise<StoredRanges[]> {
    this.loads++;
    if (this.failing) throw new Error("KV GET failed: 503");
    return [...this.lists.values()];
  }

  async save(list: StoredRanges): Promise<void> {
    this.lists.set(list.name, list);
  }
}

const listOf = (name: string, prefixes: string[], at = T0): StoredRanges => ({
  name,
  url: "https://engine.test/l.json",
  prefixes,
  fetchedAt: at,
  checkedAt: at,
  error: null,
});

describe("rangeMatcher: per isolate, reloaded at most every 5 minutes", () => {
  it("loads once, serves from memory, and reloads after 5 minutes", async () => {
    const store = new MemoryStore();
    store.lists.set("googlebot", listOf("googlebot", ["66.249.64.0/27"]));
    const first = await rangeMatcher(store, T0);
    expect(first?.crawlerOf("66.249.64.5")).toBe("googlebot");
    store.lists.set("bingbot", listOf("bingbot", ["157.55.39.0/24"]));
    const cached = await rangeMatcher(store, T0 + 4 * 60_000);
    expect(cached).toBe(first);
    expect(cached?.crawlerOf("157.55.39.1")).toBeNull();
    expect(store.loads).toBe(1);
    const reloaded = await rangeMatcher(store, T0 + 5 * 60_000);
    expect(reloaded?.crawlerOf("157.55.39.1")).toBe("bingbot");
    expect(store.loads).toBe(2);
  });

  it("keeps the matcher there was when a load fails, and never throws", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const store = new MemoryStore();
    store.lists.set("googlebot", listOf("googlebot", ["66.249.64.0/27"]));
    const first = await rangeMatcher(store, T0);
    store.failing = true;
    expect(await rangeMatcher(store, T0 + 6 * 60_000)).toBe(first);
    // Tried again a minute later, not on every call.
    expect(await rangeMatcher(store, T0 + 6 * 60_000 + 30_000)).toBe(first);
    expect(store.loads).toBe(2);
    store.failing = false;
    store.lists.set("googlebot", listOf("googlebot", ["66.249.66.0/24"]));
    expect((await rangeMatcher(store, T0 + 7 * 60_000))?.crawlerOf("66.249.66.1")).toBe("googlebot");
  });

  it("is null with no store, nothing stored, or a store failing from the start", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect(await rangeMatcher(null, T0)).toBeNull();
    expect(await rangeMatcher(new MemoryStore(), T0)).toBeNull();
    const failing = new MemoryStore();
    failing.failing = true;
    expect(await rangeMatcher(failing, T0)).toBeNull();
    // Stored lists whose fetches never worked: no prefix, no matcher.
    const empty = new MemoryStore();
    empty.lists.set("googlebot", { ...listOf("googlebot", []), fetchedAt: null, error: "HTTP 500" });
    expect(await rangeMatcher(empty, T0)).toBeNull();
  });
});

interface FakeCall {
  url: string;
  headers: Headers;
}

/** Replaces the global fetch with fake engines: `answers` by URL; anything else is a 404. */
function fakeEngines(answers: Record<string, () => Response | Promise<Response>>): FakeCall[] {
  const calls: FakeCall[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    calls.push({ url: request.url, headers: request.headers });
    const answer = answers[request.url];
    return answer ? answer() : new Response("not found", { status: 404 });
  });
  return calls;
}

const json = (body: string) => () => new Response(body, { headers: { "Content-Type": "application/json" } });

/** A site and two crawlers of their own, their lists at fake engines. */
function deployment() {
  const google = fresh("googlebot");
  const bing = fresh("bingbot");
  const urls = { google: `https://google.test/${google}.json`, bing: `https://bing.test/${bing}.json` };
  const origin = freshOrigin("ranges");
  const e = { ...env, SITES: origin, CRAWLER_IP_RANGES: `${google}=${urls.google} ${bing}=${urls.bing}` } as Env;
  return { google, bing, urls, origin, env: e, ranges: services(e).config.crawlers.ranges };
}

async function jobRow(e: Env, origin: string) {
  return e.DB.prepare("SELECT outcome, error, usage FROM jobs WHERE kind = 'crawler-ranges' AND origin = ?1")
    .bind(origin)
    .first<{ outcome: string | null; error: string | null; usage: string | null }>();
}

describe("the crawler-ranges job", () => {
  it("fetches every list at the first heartbeat, with the product's User-Agent, within a handful of subrequests and KV operations", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const d = deployment();
    const calls = fakeEngines({ [d.urls.google]: json(GOOGLE), [d.urls.bing]: json(BING) });
    const deliveries = await runCron(d.env);
    const job = deliveries.filter((x) => x.job.kind === "crawler-ranges");
    expect(job.map((x) => [x.job.origin, x.result])).toEqual([[d.origin, "acked"]]);
    expect(calls.map((c) => c.url).sort()).toEqual([d.urls.bing, d.urls.google].sort());
    for (const c of calls) expect(c.headers.get("User-Agent")).toBe(USER_AGENT);

    const row = await jobRow(d.env, d.origin);
    expect(row?.outcome).toBe(`${d.google} 4 prefixes; ${d.bing} 2 prefixes`);
    // One list, a read per stored list, a write per crawler (other tests' lists are in this namespace too).
    expect(JSON.parse(row!.usage!).kvOperations).toBeLessThanOrEqual(1 + 30 + 2);

    const status = await rangesStatus(services(d.env).crawlerRanges, services(d.env).config);
    expect(status).toEqual([
      { name: d.google, url: d.urls.google, prefixes: 4, refused: [], fetchedAt: expect.any(String), checkedAt: expect.any(String), error: null },
      { name: d.bing, url: d.urls.bing, prefixes: 2, refused: [], fetchedAt: expect.any(String), checkedAt: expect.any(String), error: null },
    ]);
    const matcher = await rangeMatcher(services(d.env).crawlerRanges);
    // Other tests' lists (the same ranges under other names) are in this namespace too: asked by name.
    expect(matcher?.has(d.google, "66.249.64.9")).toBe(true);
    expect(matcher?.has(d.bing, "207.46.13.4")).toBe(true);
  });

  it("fetches nothing again within 24 h: the next heartbeats run it, and it finds every list fresh", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const d = deployment();
    const calls = fakeEngines({ [d.urls.google]: json(GOOGLE), [d.urls.bing]: json(BING) });
    await runCron(d.env);
    expect(calls).toHaveLength(2);
    const again = await runCron(d.env);
    expect(again.filter((x) => x.job.kind === "crawler-ranges").map((x) => x.result)).toEqual(["acked"]);
    expect(calls).toHaveLength(2);
    expect((await jobRow(d.env, d.origin))?.outcome).toBe(`fresh: ${d.google}, ${d.bing}`);
  });

  it("keeps the previous prefixes on a 500, and the job succeeds", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const d = deployment();
    const store = services(d.env).crawlerRanges!;
    fakeEngines({ [d.urls.google]: json(GOOGLE), [d.urls.bing]: json(BING) });
    await refreshCrawlerRanges(store, d.ranges, { now: Date.now() - REFRESH_EVERY_MS - HOUR });
    vi.restoreAllMocks();
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const calls = fakeEngines({ [d.urls.google]: () => new Response("oops", { status: 500 }), [d.urls.bing]: json(BING) });
    const deliveries = await runCron(d.env);
    expect(deliveries.filter((x) => x.job.kind === "crawler-ranges").map((x) => x.result)).toEqual(["acked"]);
    expect(calls).toHaveLength(2);
    const row = await jobRow(d.env, d.origin);
    expect(row?.outcome).toBe(`${d.bing} 2 prefixes; ${d.google} failed: google.test answered HTTP 500`);
    expect(row?.error).toBeNull();
    const [google, bing] = await rangesStatus(store, services(d.env).config);
    expect(google).toMatchObject({ prefixes: 4, error: "google.test answered HTTP 500" });
    expect(Date.parse(google!.checkedAt!) - Date.parse(google!.fetchedAt!)).toBeGreaterThan(REFRESH_EVERY_MS);
    expect(bing).toMatchObject({ prefixes: 2, error: null });
    // The isolate's one matcher per namespace may hold another test's load: read again (as 5 minutes later).
    expect((await rangeMatcher(store, Date.now() + 10 * 60_000))?.has(d.google, "66.249.64.9")).toBe(true);
  });

  it("a list holding 0.0.0.0/0 keeps its plausible prefixes; status shows the refused one, and it verifies no other address", async () => {
    const d = deployment();
    const store = services(d.env).crawlerRanges!;
    const wide = JSON.stringify({ prefixes: [{ ipv4Prefix: "0.0.0.0/0" }, { ipv6Prefix: "2001::/16" }, { ipv4Prefix: "66.249.64.0/27" }] });
    fakeEngines({ [d.urls.google]: json(wide), [d.urls.bing]: json(BING) });
    await refreshCrawlerRanges(store, d.ranges, { now: Date.now() });
    const [google] = await rangesStatus(store, services(d.env).config);
    expect(google).toMatchObject({ prefixes: 1, refused: ["0.0.0.0/0", "2001::/16"], error: null });
    const matcher = await rangeMatcher(store, Date.now() + 30 * 60_000);
    expect(matcher?.has(d.google, "66.249.64.9")).toBe(true);
    expect(matcher?.has(d.google, "203.0.113.9")).toBe(false);
  });

  it("keeps the previous prefixes on a bad body, a body over 1 MiB and a timeout, each saying why", async () => {
    const d = deployment();
    const store = services(d.env).crawlerRanges!;
    const day = (n: number) => T0 + n * (REFRESH_EVERY_MS + HOUR);
    const run = (n: number, google: () => Response | Promise<Response>) => {
      vi.restoreAllMocks();
      fakeEngines({ [d.urls.google]: google, [d.urls.bing]: json(BING) });
      return refreshCrawlerRanges(store, d.ranges, { now: day(n), timeoutMs: 200 });
    };
    expect(describeRefresh(await run(0, json(GOOGLE)))).toBe(`${d.google} 4 prefixes; ${d.bing} 2 prefixes`);
    const bad: [() => Response | Promise<Response>, string][] = [
      [() => new Response("<html>maintenance</html>", { headers: { "Content-Type": "text/html" } }), "not JSON"],
      [json(JSON.stringify({ prefixes: [{ ipv4Prefix: "nonsense" }] })), "no valid IP prefix in the list"],
      [json(JSON.stringify({ creationTime: "x" })), 'not a list of IP ranges (no "prefixes" array)'],
      [() => new Response(new Uint8Array(1024 * 1024 + 1).fill(32)), "the list is larger than 1048576 bytes"],
      [() => new Response(null, { status: 404 }), "google.test answered HTTP 404"],
      [() => new Promise<Response>(() => undefined), "timed out after 200 ms"],
      [
        () =>
          new Response(
            new ReadableStream({
              start(c) {
                c.enqueue(new TextEncoder().encode('{"prefixes": ['));
              },
            }),
          ),
        "timed out after 200 ms",
      ],
      [
        () => {
          throw new TypeError("Network connection lost.");
        },
        "google.test could not be reached (network error: Network connection lost.)",
      ],
      [
        () => {
          throw new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) });
        },
        "google.test could not be reached (network error: ECONNREFUSED)",
      ],
    ];
    for (const [i, [answer, why]] of bad.entries()) {
      const report = await run(i + 1, answer);
      expect(report.failed, why).toEqual([{ name: d.google, error: why }]);
      expect(report.fetched).toEqual([{ name: d.bing, prefixes: 2 }]);
      const stored = (await store.loadAll()).find((l) => l.name === d.google)!;
      expect(stored, why).toMatchObject({ prefixes: parseRangeFile(GOOGLE), fetchedAt: day(0), checkedAt: day(i + 1), error: why });
    }
    // Fixed: the next day's refresh clears the error.
    await run(bad.length + 1, json(GOOGLE));
    expect((await store.loadAll()).find((l) => l.name === d.google)).toMatchObject({ fetchedAt: day(bad.length + 1), error: null });
  });

  it("a list never fetched stays empty when its first fetch fails; it is tried again at the next heartbeat only after 24 h", async () => {
    const d = deployment();
    const store = services(d.env).crawlerRanges!;
    const calls = fakeEngines({ [d.urls.bing]: json(BING) });
    const first = await refreshCrawlerRanges(store, d.ranges, { now: T0 });
    expect(first.failed).toEqual([{ name: d.google, error: "google.test answered HTTP 404" }]);
    expect((await store.loadAll()).find((l) => l.name === d.google)).toMatchObject({
      prefixes: [],
      fetchedAt: null,
      error: "google.test answered HTTP 404",
    });
    expect((await refreshCrawlerRanges(store, d.ranges, { now: T0 + 23 * HOUR })).fresh).toEqual([d.google, d.bing]);
    expect(calls).toHaveLength(2);
    expect((await refreshCrawlerRanges(store, d.ranges, { now: T0 + 24 * HOUR })).failed).toHaveLength(1);
    expect(calls).toHaveLength(4);
  });

  it("fetches a list again at once when its URL changed", async () => {
    const d = deployment();
    const store = services(d.env).crawlerRanges!;
    const moved = "https://google.test/moved.json";
    const calls = fakeEngines({ [d.urls.google]: json(GOOGLE), [d.urls.bing]: json(BING), [moved]: json(BING) });
    await refreshCrawlerRanges(store, d.ranges, { now: T0 });
    const report = await refreshCrawlerRanges(store, [{ name: d.google, url: moved }, d.ranges[1]!], { now: T0 + HOUR });
    expect(report).toEqual({ fetched: [{ name: d.google, prefixes: 2 }], failed: [], fresh: [d.bing] });
    expect(calls.map((c) => c.url)).toContain(moved);
  });

  it("after a local stand-in, back on the default URL: a failed fetch keeps none of the stand-in's prefixes", async () => {
    const d = deployment();
    const store = services(d.env).crawlerRanges!;
    const standIn = "http://127.0.0.1:9/googlebot.json";
    fakeEngines({ [standIn]: json(JSON.stringify({ prefixes: [{ ipv4Prefix: "127.0.0.1/32" }] })), [d.urls.bing]: json(BING) });
    await refreshCrawlerRanges(store, [{ name: d.google, url: standIn }, d.ranges[1]!], { now: T0 });
    expect((await store.loadAll()).find((l) => l.name === d.google)).toMatchObject({ url: standIn, prefixes: ["127.0.0.1/32"] });
    vi.restoreAllMocks();
    fakeEngines({ [d.urls.bing]: json(BING) }); // the default URL answers 404 (offline, say)
    const report = await refreshCrawlerRanges(store, d.ranges, { now: T0 + HOUR });
    expect(report.failed).toEqual([{ name: d.google, error: "google.test answered HTTP 404" }]);
    expect((await store.loadAll()).find((l) => l.name === d.google)).toMatchObject({ url: d.urls.google, prefixes: [], fetchedAt: null });
  });

  it("an unreachable host (real fetch, nothing listening) says the host and that it could not be reached", async () => {
    const d = deployment();
    const store = services(d.env).crawlerRanges!;
    const report = await refreshCrawlerRanges(store, [{ name: d.google, url: "http://127.0.0.1:9/googlebot.json" }], { now: T0, timeoutMs: 5_000 });
    expect(report.failed).toHaveLength(1);
    expect(report.failed[0]!.error).toMatch(/^127\.0\.0\.1:9 could not be reached \(network error: .+\)$/);
  });

  it("is not scheduled without ranges; status lists the configured crawlers even before any refresh", async () => {
    const origin = freshOrigin("no-ranges");
    const none = { ...env, SITES: origin, CRAWLER_IP_RANGES: "none" } as Env;
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const deliveries = await runCron(none);
    expect(deliveries.map((x) => x.job.kind)).not.toContain("crawler-ranges");
    expect(await rangesStatus(services(none).crawlerRanges, services(none).config)).toEqual([]);
    const d = deployment();
    expect(await rangesStatus(services(d.env).crawlerRanges, services(d.env).config)).toEqual([
      { name: d.google, url: d.urls.google, prefixes: 0, refused: [], fetchedAt: null, checkedAt: null, error: null },
      { name: d.bing, url: d.urls.bing, prefixes: 0, refused: [], fetchedAt: null, checkedAt: null, error: null },
    ]);
    expect(await rangesStatus(null, services(d.env).config)).toHaveLength(2);
  });
});
