/**
 * What Google did with the sitemaps (src/gsc/): the cron reads Search Console's `sitemaps.list`
 * with the service account's token, at most every GSC_STATUS_INTERVAL per site, stores each
 * sitemap's report in D1 and shows it in /sitemap-admin/status, flagged when Google has not
 * downloaded it since it changed or found errors. 403, 429 (Retry-After) and a 5 MB answer keep the
 * last good state. Google is a fake at the fetch boundary; the key pair is generated here.
 */
import { describe, expect, it } from "vitest";
import { GSC_READ_SCOPE, GSC_SUBMIT_SCOPE } from "../../src/config/notify.ts";
import { MAX_OTHER_SITEMAPS } from "../../src/gsc/keep.ts";
import { parseSitemapsList } from "../../src/gsc/parse.ts";
import { MAX_LIST_BYTES, readSearchConsoleStatus } from "../../src/gsc/scheduled.ts";
import type { SearchConsoleStatus } from "../../src/gsc/status.ts";
import { databaseServices, services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { type Call, FakeEngine, HOUR, MINUTE, MemoryLog, pages, serviceAccountKey, siteEnv, upsert } from "./notify-support.ts";
import { call, freshOrigin } from "./support.ts";

const T0 = Date.UTC(2026, 2, 1, 12);
const TOKEN_URL = "https://oauth.test/token";
const API = "https://gsc.test";
const ACCESS_TOKEN = "ya29.gsc-status-token";
const ADMIN = { Authorization: "Bearer test-admin-token-0123456789abcdef" };

const { pem: PEM } = await serviceAccountKey();

function gscEnv(origin: string, vars: Record<string, string> = {}): Env {
  const account = JSON.stringify({ type: "service_account", client_email: "sitemaps@p.iam.gserviceaccount.com", private_key: PEM });
  return siteEnv(origin, { GSC_SERVICE_ACCOUNT: account, GSC_TOKEN_URL: TOKEN_URL, GSC_API_BASE: API, ...vars });
}

/** Google's answer for a site's index: the given errors and download time. */
function listAnswer(origin: string, over: Record<string, unknown> = {}): Response {
  return Response.json({
    sitemap: [
      {
        path: `${origin}/sitemap.xml`,
        lastSubmitted: "2026-02-27T10:00:00.000Z",
        isPending: false,
        isSitemapsIndex: true,
        lastDownloaded: "2026-02-28T09:30:00.000Z",
        warnings: "1",
        errors: "2",
        contents: [{ type: "web", submitted: "120", indexed: "0" }],
        ...over,
      },
    ],
  });
}

type Answer = (call: Call) => Response | Promise<Response>;

/** A fake Google: the token endpoint, `list` for sitemaps.list, `under` for the list under an index (`sitemapIndex=`). */
function google(list: Answer, under: Answer = () => Response.json({})): FakeEngine {
  return new FakeEngine((c) => {
    if (c.url === TOKEN_URL) return Response.json({ access_token: ACCESS_TOKEN, expires_in: 3599 });
    return new URL(c.url).searchParams.has("sitemapIndex") ? under(c) : list(c);
  });
}

/** The JWT claims of the assertion sent to the token endpoint. */
function assertionClaims(engine: FakeEngine): Record<string, unknown> {
  const token = engine.calls.find((c) => c.url === TOKEN_URL)!;
  const assertion = new URLSearchParams(token.body).get("assertion")!;
  const payload = assertion.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/");
  return JSON.parse(atob(payload)) as Record<string, unknown>;
}

/** Search Console's report of one shard. */
function shardReport(url: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    path: url,
    lastSubmitted: "2026-02-27T10:00:00.000Z",
    lastDownloaded: "2026-02-28T08:00:00.000Z",
    isPending: false,
    isSitemapsIndex: false,
    warnings: "0",
    errors: "0",
    contents: [{ type: "web", submitted: "40" }],
    ...over,
  };
}

const listCalls = (engine: FakeEngine): Call[] => engine.calls.filter((c) => c.url !== TOKEN_URL);

async function statusOf(env: Env, origin: string): Promise<SearchConsoleStatus> {
  const res = await call(env, `${origin}/sitemap-admin/status`, { headers: ADMIN });
  expect(res.status).toBe(200);
  return ((await res.json()) as { searchConsole: SearchConsoleStatus }).searchConsole;
}

/** A site with records changed at `changedAt` and its manifest built. */
async function site(label: string, changedAt: number, vars: Record<string, string> = {}): Promise<{ origin: string; env: Env }> {
  const origin = freshOrigin(label);
  const env = gscEnv(origin, vars);
  await upsert(env, pages(origin, 3), changedAt);
  await rebuildManifest(services(env), origin);
  return { origin, env };
}

describe("Search Console status", () => {
  it("reads sitemaps.list with the token, stores it, and status shows errors and lastDownloaded with the flags", async () => {
    // Records changed after Google's last download: flagged.
    const { origin, env } = await site("gsc-status", Date.UTC(2026, 1, 28, 11));
    const engine = google(() => listAnswer(origin));
    const reports = await readSearchConsoleStatus(databaseServices(env), env, { now: T0, fetch: engine.fetch, log: new MemoryLog() });
    expect(reports).toEqual([{ origin, result: "read", status: 200, requests: 2 }]);
    const [list] = listCalls(engine);
    expect(list!.method).toBe("GET");
    expect(list!.url).toBe(`${API}/webmasters/v3/sites/${encodeURIComponent(`${origin}/`)}/sitemaps`);
    expect(list!.headers.get("Authorization")).toBe(`Bearer ${ACCESS_TOKEN}`);

    const gsc = await statusOf(env, origin);
    expect(gsc).toMatchObject({
      enabled: true,
      lastRead: new Date(T0).toISOString(),
      lastSuccess: new Date(T0).toISOString(),
      httpStatus: 200,
      lastError: null,
    });
    expect(gsc.sitemaps).toEqual([
      expect.objectContaining({
        path: `${origin}/sitemap.xml`,
        lastDownloaded: "2026-02-28T09:30:00.000Z",
        errors: 2,
        warnings: 1,
        submitted: 120,
        isPending: false,
        changedAt: new Date(Date.UTC(2026, 1, 28, 11)).toISOString(),
        notDownloadedSinceChange: true,
        hasErrors: true,
      }),
    ]);
  });

  it("does not flag a sitemap Google downloaded after it changed, nor one without errors", async () => {
    const { origin, env } = await site("gsc-fresh", Date.UTC(2026, 1, 27));
    const engine = google(() => listAnswer(origin, { errors: "0" }));
    await readSearchConsoleStatus(databaseServices(env), env, { now: T0, fetch: engine.fetch, log: new MemoryLog() });
    const [sitemap] = (await statusOf(env, origin)).sitemaps;
    expect(sitemap).toMatchObject({ errors: 0, hasErrors: false, notDownloadedSinceChange: false });
  });

  it("reads a site at most every GSC_STATUS_INTERVAL", async () => {
    const { origin, env } = await site("gsc-interval", T0 - HOUR, { GSC_STATUS_INTERVAL: "7200" });
    const engine = google(() => listAnswer(origin));
    const log = new MemoryLog();
    await readSearchConsoleStatus(databaseServices(env), env, { now: T0, fetch: engine.fetch, log });
    expect(await readSearchConsoleStatus(databaseServices(env), env, { now: T0 + HOUR, fetch: engine.fetch, log })).toEqual([
      { origin, result: "skipped" },
    ]);
    // A read is the list and the list under the index.
    expect(listCalls(engine)).toHaveLength(2);
    await readSearchConsoleStatus(databaseServices(env), env, { now: T0 + 2 * HOUR, fetch: engine.fetch, log });
    expect(listCalls(engine)).toHaveLength(4);
  });

  it("403: a configuration error, logged without the token; the last good state stays and the read backs off", async () => {
    const { origin, env } = await site("gsc-403", T0 - HOUR);
    const good = google(() => listAnswer(origin));
    await readSearchConsoleStatus(databaseServices(env), env, { now: T0, fetch: good.fetch, log: new MemoryLog() });
    const later = T0 + 7 * HOUR;
    const refused = google(() =>
      Response.json({ error: { code: 403, message: `User does not have sufficient permission; Bearer ${ACCESS_TOKEN}` } }, { status: 403 }),
    );
    const log = new MemoryLog();
    expect(await readSearchConsoleStatus(databaseServices(env), env, { now: later, fetch: refused.fetch, log })).toEqual([
      { origin, result: "config", status: 403, requests: 1 },
    ]);
    const gsc = await statusOf(env, origin);
    expect(gsc.httpStatus).toBe(403);
    expect(gsc.lastError).toContain("sufficient permission");
    expect(gsc.lastSuccess).toBe(new Date(T0).toISOString());
    expect(gsc.sitemaps.map((s) => s.errors)).toEqual([2]);
    expect(Date.parse(gsc.nextAttempt!)).toBe(later + HOUR);
    for (const text of [...log.lines, JSON.stringify(gsc)]) expect(text).not.toContain(ACCESS_TOKEN);
    expect(log.lines.some((l) => l.startsWith("error configuration error: Search Console status"))).toBe(true);
    // Backing off: no request before the next attempt.
    await readSearchConsoleStatus(databaseServices(env), env, { now: later + 30 * MINUTE, fetch: refused.fetch, log });
    expect(listCalls(refused)).toHaveLength(1);
  });

  it("429 with Retry-After: retried no sooner than the server asked", async () => {
    const { origin, env } = await site("gsc-429", T0 - HOUR);
    const engine = google(() => new Response("quota", { status: 429, headers: { "Retry-After": "7200" } }));
    const log = new MemoryLog();
    expect(await readSearchConsoleStatus(databaseServices(env), env, { now: T0, fetch: engine.fetch, log })).toEqual([
      { origin, result: "retry", status: 429, requests: 1 },
    ]);
    expect(Date.parse((await statusOf(env, origin)).nextAttempt!)).toBe(T0 + 2 * HOUR);
    await readSearchConsoleStatus(databaseServices(env), env, { now: T0 + HOUR, fetch: engine.fetch, log });
    expect(listCalls(engine)).toHaveLength(1);
    engine.respond = (c) => (c.url === TOKEN_URL ? Response.json({ access_token: ACCESS_TOKEN }) : listAnswer(origin));
    expect(await readSearchConsoleStatus(databaseServices(env), env, { now: T0 + 2 * HOUR, fetch: engine.fetch, log })).toEqual([
      { origin, result: "read", status: 200, requests: 2 },
    ]);
    const gsc = await statusOf(env, origin);
    expect(gsc).toMatchObject({ httpStatus: 200, lastError: null, nextAttempt: null });
  });

  it("a 5 MB answer is refused at the cap, read no further, and the last good state stays", async () => {
    const { origin, env } = await site("gsc-huge", T0 - HOUR);
    await readSearchConsoleStatus(databaseServices(env), env, { now: T0, fetch: google(() => listAnswer(origin)).fetch, log: new MemoryLog() });
    let pulled = 0;
    const CHUNK = 64 * 1024;
    const huge = (): Response => {
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (pulled >= 5 * 1024 * 1024) return controller.close();
          pulled += CHUNK;
          controller.enqueue(new TextEncoder().encode(`{"sitemap":[${" ".repeat(CHUNK - 13)}`.slice(0, CHUNK)));
        },
      });
      return new Response(body, { headers: { "Content-Type": "application/json" } });
    };
    const log = new MemoryLog();
    const later = T0 + 7 * HOUR;
    expect(await readSearchConsoleStatus(databaseServices(env), env, { now: later, fetch: google(huge).fetch, log })).toEqual([
      { origin, result: "retry", status: 200, requests: 1 },
    ]);
    expect(pulled).toBeLessThanOrEqual(MAX_LIST_BYTES + 4 * CHUNK);
    const gsc = await statusOf(env, origin);
    expect(gsc.lastError).toBe(`answer over ${MAX_LIST_BYTES} bytes: not read`);
    expect(gsc.lastSuccess).toBe(new Date(T0).toISOString());
    expect(gsc.sitemaps.map((s) => s.path)).toEqual([`${origin}/sitemap.xml`]);
  });

  it("a token endpoint that refuses is a failed read; nothing is read without GSC_SERVICE_ACCOUNT or with a bad interval", async () => {
    const { origin, env } = await site("gsc-token", T0 - HOUR);
    const engine = new FakeEngine(() => Response.json({ error: "invalid_grant" }, { status: 400 }));
    expect(await readSearchConsoleStatus(databaseServices(env), env, { now: T0, fetch: engine.fetch, log: new MemoryLog() })).toEqual([
      { origin, result: "config", status: 400, requests: 0 },
    ]);
    expect((await statusOf(env, origin)).lastError).toMatch(/^access token: HTTP 400/);

    const off = new FakeEngine();
    expect(
      await readSearchConsoleStatus(databaseServices(siteEnv(freshOrigin("gsc-off"))), siteEnv(freshOrigin("gsc-off")), { now: T0, fetch: off.fetch }),
    ).toEqual([]);
    const log = new MemoryLog();
    expect(
      await readSearchConsoleStatus(databaseServices({ ...env, GSC_STATUS_INTERVAL: "soon" } as Env), { ...env, GSC_STATUS_INTERVAL: "soon" } as Env, {
        now: T0 + 9 * HOUR,
        fetch: off.fetch,
        log,
      }),
    ).toEqual([]);
    expect(off.calls).toHaveLength(0);
    expect(log.lines.join("\n")).toMatch(/GSC_STATUS_INTERVAL must be a whole number/);
    const statusOff = await statusOf(siteEnv(origin), origin);
    expect(statusOff.enabled).toBe(false);
  });

  it("reads the shards under the index with sitemapIndex=, so each shard has its own row after the index", async () => {
    const { origin, env } = await site("gsc-shards", Date.UTC(2026, 1, 28, 7));
    const index = `${origin}/sitemap.xml`;
    const shards = [1, 2, 3].map((n) => `${origin}/sitemap-pages-${n}.xml`);
    const engine = google(
      () => listAnswer(origin),
      () =>
        Response.json({
          sitemap: [
            shardReport(shards[2]!, { errors: "5", lastDownloaded: "2026-02-28T06:00:00.000Z" }),
            shardReport(shards[0]!),
            shardReport(shards[1]!, { warnings: "3" }),
          ],
        }),
    );
    expect(await readSearchConsoleStatus(databaseServices(env), env, { now: T0, fetch: engine.fetch, log: new MemoryLog() })).toEqual([
      { origin, result: "read", status: 200, requests: 2 },
    ]);
    const [, under] = listCalls(engine);
    expect(under!.url).toBe(`${API}/webmasters/v3/sites/${encodeURIComponent(`${origin}/`)}/sitemaps?sitemapIndex=${encodeURIComponent(index)}`);
    expect(new URL(under!.url).searchParams.get("sitemapIndex")).toBe(index);
    const gsc = await statusOf(env, origin);
    expect(gsc.sitemaps.map((m) => m.path)).toEqual([index, ...shards]);
    expect(gsc.sitemaps.map((m) => [m.errors, m.warnings, m.lastDownloaded])).toEqual([
      [2, 1, "2026-02-28T09:30:00.000Z"],
      [0, 0, "2026-02-28T08:00:00.000Z"],
      [0, 3, "2026-02-28T08:00:00.000Z"],
      [5, 0, "2026-02-28T06:00:00.000Z"],
    ]);
    // Shard 1 holds the records changed at 07:00; Google fetched it at 08:00, so it is current.
    expect(gsc.sitemaps[1]).toMatchObject({ notDownloadedSinceChange: false, hasErrors: false });
    expect(gsc.sitemaps[3]).toMatchObject({ hasErrors: true });
  });

  it("does not ask for shards of an index Google does not list, and a failing shard list keeps the last good state whole", async () => {
    const { origin, env } = await site("gsc-no-index", T0 - HOUR);
    const other = google(() => Response.json({ sitemap: [shardReport(`${origin}/old-sitemap.xml`)] }));
    await readSearchConsoleStatus(databaseServices(env), env, { now: T0, fetch: other.fetch, log: new MemoryLog() });
    expect(listCalls(other)).toHaveLength(1);

    const log = new MemoryLog();
    const failing = google(
      () => listAnswer(origin),
      () => new Response("backend error", { status: 503 }),
    );
    expect(await readSearchConsoleStatus(databaseServices(env), env, { now: T0 + 7 * HOUR, fetch: failing.fetch, log })).toEqual([
      { origin, result: "retry", status: 503, requests: 2 },
    ]);
    const gsc = await statusOf(env, origin);
    expect(gsc.sitemaps.map((m) => m.path)).toEqual([`${origin}/old-sitemap.xml`]);
    expect(gsc).toMatchObject({ httpStatus: 503, lastSuccess: new Date(T0).toISOString() });
  });

  it("with a domain property, the site's own sitemaps are kept first and other hosts' are capped", async () => {
    const { origin, env } = await site("gsc-domain", T0 - HOUR, { GSC_PROPERTY: "sc-domain:{host}" });
    const foreign = Array.from({ length: 250 }, (_, i) => shardReport(`https://shop${i}.other.example/sitemap.xml`));
    // Our index comes last in Google's answer: a keep-the-first-200 cut would drop it.
    const engine = google(
      () =>
        Response.json({
          sitemap: [...foreign, { path: `${origin}/sitemap.xml`, isSitemapsIndex: true, errors: "0", warnings: "0", contents: [] }],
        }),
      () => Response.json({ sitemap: [shardReport(`${origin}/sitemap-pages-1.xml`)] }),
    );
    await readSearchConsoleStatus(databaseServices(env), env, { now: T0, fetch: engine.fetch, log: new MemoryLog() });
    expect(listCalls(engine)[0]!.url).toContain(`/sites/${encodeURIComponent(`sc-domain:${new URL(origin).host}`)}/sitemaps`);
    const gsc = await statusOf(env, origin);
    expect(gsc.sitemaps.slice(0, 2).map((m) => [m.path, m.own])).toEqual([
      [`${origin}/sitemap.xml`, true],
      [`${origin}/sitemap-pages-1.xml`, true],
    ]);
    expect(gsc.sitemaps).toHaveLength(2 + MAX_OTHER_SITEMAPS);
    expect(gsc.dropped).toBe(250 - MAX_OTHER_SITEMAPS);
  });

  it("a count that does not parse is unknown (null), never 0, and never flags or clears errors", async () => {
    const { origin, env } = await site("gsc-unknown", T0 - HOUR);
    const engine = google(() => listAnswer(origin, { errors: "lots", warnings: -1, contents: [{ type: "web", submitted: "1e3" }] }));
    await readSearchConsoleStatus(databaseServices(env), env, { now: T0, fetch: engine.fetch, log: new MemoryLog() });
    const [index] = (await statusOf(env, origin)).sitemaps;
    expect(index).toMatchObject({ errors: null, warnings: null, submitted: null, hasErrors: false });
  });

  it("reads with a read-only token; submissions keep the read-write scope", async () => {
    const { origin, env } = await site("gsc-scope", T0 - HOUR);
    const engine = google(() => listAnswer(origin));
    await readSearchConsoleStatus(databaseServices(env), env, { now: T0, fetch: engine.fetch, log: new MemoryLog() });
    expect(assertionClaims(engine).scope).toBe(GSC_READ_SCOPE);
    expect(GSC_SUBMIT_SCOPE).toBe("https://www.googleapis.com/auth/webmasters");
    expect(GSC_READ_SCOPE).toBe("https://www.googleapis.com/auth/webmasters.readonly");
  });

  it("refuses an http token or API URL (the feature is off, named in status); http to a loopback stand-in is allowed", async () => {
    const origin = freshOrigin("gsc-http");
    const insecure: Record<string, string>[] = [{ GSC_API_BASE: "http://gsc.example" }, { GSC_TOKEN_URL: "http://oauth.example/token" }];
    for (const vars of insecure) {
      const env = gscEnv(origin, vars);
      const config = services(env).config;
      expect(config.notify.searchConsole).toBeNull();
      expect(config.disabled).toEqual([expect.objectContaining({ feature: "search-console", variable: Object.keys(vars)[0] })]);
      const engine = google(() => listAnswer(origin));
      expect(await readSearchConsoleStatus(databaseServices(env), env, { now: T0, fetch: engine.fetch, log: new MemoryLog() })).toEqual([]);
      expect(engine.calls).toHaveLength(0);
    }
    const local = services(gscEnv(origin, { GSC_API_BASE: "http://127.0.0.1:9", GSC_TOKEN_URL: "http://localhost:9/token" })).config;
    expect(local.notify.searchConsole).toMatchObject({ apiBase: "http://127.0.0.1:9", tokenUrl: "http://localhost:9/token" });
  });
});

describe("sitemaps.list answers", () => {
  it("takes the API's int64 strings and RFC 3339 times, skips entries that are not sitemaps, and reads an empty answer as none", () => {
    const parsed = parseSitemapsList(
      JSON.stringify({
        sitemap: [
          {
            path: "https://a.example/sitemap.xml",
            errors: "3",
            warnings: 4,
            lastDownloaded: "not a date",
            contents: [{ type: "web", submitted: "7" }, "x"],
          },
          { errors: "1" },
          "nonsense",
        ],
      }),
    );
    expect(parsed).toEqual({
      sitemaps: [
        {
          path: "https://a.example/sitemap.xml",
          lastSubmitted: null,
          lastDownloaded: null,
          isPending: false,
          isSitemapsIndex: false,
          errors: 3,
          warnings: 4,
          contents: [{ type: "web", submitted: 7 }],
        },
      ],
      dropped: 2,
    });
    expect(parseSitemapsList("{}")).toEqual({ sitemaps: [], dropped: 0 });
    expect(parseSitemapsList("[1]")).toBeNull();
    expect(parseSitemapsList('{"sitemap": 3}')).toBeNull();
    expect(parseSitemapsList("<html>")).toBeNull();
  });
});
