/**
 * Issue 49: a write stamped behind the change feed's cursor (its writer's clock 90 s behind, past
 * the former settle window of 60 s) is acknowledged, then rendered into the shard snapshots and
 * announced to IndexNow like any other: the regeneration and the notifications read D1's feed in
 * commit order (`urls.seq`), so a change committed after a cursor is read past it whatever its
 * stamp. Through the Worker's own entries: the admin API for the writes (the clock injected as the
 * simulation does, Date only), the queue consumer for the regenerate → notify chain, a crawl of the
 * index and its shards; the engine faked at the fetch boundary. One database, and a site over two
 * (a cursor per partition database).
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { IndexNowPayload } from "../../src/notify/indexnow.ts";
import { FakeEngine } from "./notify-support.ts";
import { AUTH } from "./sim/checks.ts";
import { type RecordingQueue, drain, runCron, withJobs } from "./support/jobs.ts";
import { call, document, freshOrigin, locsOf } from "./support.ts";

const ENDPOINT = "https://indexnow.lagging.test/indexnow";
const T0 = Date.parse("2026-05-04T08:00:00Z");
const LAG_MS = 90_000;

beforeAll(async () => {
  await applyD1Migrations(baseEnv.PART_B, baseEnv.TEST_MIGRATIONS);
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

interface Site {
  origin: string;
  env: Env;
  queue: RecordingQueue;
  engine: FakeEngine;
}

function siteOver(databases: string[]): Site {
  const origin = freshOrigin("lagging");
  const { env, queue } = withJobs({
    ...baseEnv,
    SITES: origin,
    ...(databases.length > 1 ? { SITE_DATABASES: `${origin}=${databases.join(",")}` } : {}),
    MAX_URLS_PER_SHARD: "5",
    INDEXNOW_KEY: "lagging-key-0123456789",
    INDEXNOW_ENDPOINT: ENDPOINT,
    PING_URLS: "",
  } as Env);
  const engine = new FakeEngine(() => new Response(null, { status: 200 }));
  // The notification job sends with the global fetch: the engine answers its endpoint, anything else goes out as it would.
  const real = globalThis.fetch.bind(globalThis);
  vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    return url.startsWith(ENDPOINT) ? engine.fetch(input, init) : real(input, init);
  });
  return { origin, env, queue, engine };
}

/** An admin write at `clock`, acknowledged. */
async function write(site: Site, clock: number, method: "PUT" | "DELETE", body: unknown): Promise<void> {
  vi.setSystemTime(clock);
  const res = await call(site.env, `${site.origin}/sitemap-admin/urls`, {
    method,
    headers: { ...AUTH, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** The chain the writes queued (regenerate, then notify), run at `clock`, delayed messages at once. */
async function publish(site: Site, clock: number): Promise<void> {
  vi.setSystemTime(clock);
  const deliveries = await drain(site.env, site.queue, { early: true });
  expect(deliveries.every((d) => d.result === "acked")).toBe(true);
  expect(deliveries.map((d) => d.job.kind)).toContain("notify");
}

/** Every `<url>` served through the index's shards: loc → lastmod. */
async function crawl(site: Site): Promise<Map<string, string>> {
  const served = new Map<string, string>();
  for (const shard of locsOf(await document(site.env, `${site.origin}/sitemap.xml`))) {
    const res = await call(site.env, shard);
    expect(res.status, shard).toBe(200);
    // Rendered by the regeneration: a live render would read the rows whatever the feed did.
    expect(res.headers.get("X-Sitemap-Source"), shard).not.toBe("live");
    for (const [, entry] of (await res.text()).matchAll(/<url>([\s\S]*?)<\/url>/g)) {
      served.set(locsOf(`<urlset><url>${entry}</url></urlset>`)[0]!, /<lastmod>([^<]*)<\/lastmod>/.exec(entry!)?.[1] ?? "");
    }
  }
  return served;
}

const announced = (site: Site): string[][] => site.engine.calls.map((c) => (JSON.parse(c.body) as IndexNowPayload).urlList);

describe.each([
  ["one database", ["DB"]],
  ["a site over two databases", ["DB", "PART_B"]],
])("a PUT and a DELETE stamped 90 s behind the feed's cursor (%s)", (_, databases) => {
  it("are rendered into the shards and announced to IndexNow", async () => {
    const site = siteOver(databases);
    const loc = (i: number) => `${site.origin}/p/${i}`;
    const all = Array.from({ length: 16 }, (_, i) => loc(i));

    // The site and its first publication: IndexNow's first run sets its cursor, sends nothing.
    await write(
      site,
      T0,
      "PUT",
      all.map((l) => ({ loc: l, lastmod: "2026-01-01" })),
    );
    await publish(site, T0 + 5 * 60_000);
    expect(site.engine.calls).toHaveLength(0);

    // A change read by both feeds a minute and more after it: their cursors are past its stamp.
    const T1 = T0 + 10 * 60_000;
    await write(site, T1, "PUT", [{ loc: loc(0), lastmod: "2026-02-02" }]);
    await publish(site, T1 + 61_000);
    expect(announced(site)).toEqual([[loc(0)]]);

    // Writers whose clocks are 90 s behind: stamped before the cursors, committed after them.
    const lagging = T1 + 70_000 - LAG_MS;
    const updated = [loc(3), loc(6), loc(9), loc(12)];
    const deleted = [loc(4), loc(7), loc(10), loc(13)];
    await write(
      site,
      lagging,
      "PUT",
      updated.map((l) => ({ loc: l, lastmod: "2026-03-03" })),
    );
    await write(site, lagging, "DELETE", deleted);
    await publish(site, T1 + 10 * 60_000);

    const served = await crawl(site);
    for (const l of updated) expect(served.get(l), l).toBe("2026-03-03");
    for (const l of deleted) expect(served.has(l), l).toBe(false);
    expect(served.size).toBe(all.length - deleted.length);
    // Announced once each, in one submission per database whose cursor they passed.
    expect(announced(site).slice(1).flat().sort()).toEqual([...updated, ...deleted].sort());

    // Nothing is read again: the next heartbeat's chain announces nothing, a later write alone.
    const submissions = site.engine.calls.length;
    vi.setSystemTime(T1 + 20 * 60_000);
    expect((await runCron(site.env)).map((d) => d.result)).not.toContain("retried");
    expect(site.engine.calls).toHaveLength(submissions);
    await write(site, T1 + 30 * 60_000, "PUT", [{ loc: loc(1), lastmod: "2026-04-04" }]);
    await publish(site, T1 + 35 * 60_000);
    expect(announced(site).at(-1)).toEqual([loc(1)]);
    expect(
      announced(site)
        .flat()
        .filter((l) => l !== loc(1))
        .sort(),
    ).toEqual([loc(0), ...updated, ...deleted].sort());
  });
});
