/**
 * No D1 work from anonymous repetition: the feed and the news sitemaps answer repeats (conditional
 * or not) and news files past the end from cached validators. Queries are counted on the D1
 * binding itself.
 */
import { describe, expect, it } from "vitest";
import { d1Fixture } from "./fixtures/sources.ts";
import { call, freshOrigin, validRecords } from "./support.ts";

/** The env with its D1 binding wrapped: every prepared statement, batch or exec is counted. */
function countingEnv(env: Env): { env: Env; queries: () => number; reset: () => void } {
  let n = 0;
  const db = new Proxy(env.DB, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (prop === "prepare" || prop === "batch" || prop === "exec") n++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { env: { ...env, DB: db } as Env, queries: () => n, reset: () => void (n = 0) };
}

async function seeded(label: string): Promise<{ origin: string; env: Env }> {
  const origin = freshOrigin(label);
  const env = d1Fixture.env({ SITES: origin });
  const now = Date.now();
  const inputs = [1, 2, 3].map((i) => ({
    loc: `${origin}/news/${i}`,
    news: { publication: { name: "Daily", language: "en" }, publication_date: new Date(now - i * 60_000).toISOString(), title: `Story ${i}` },
  }));
  await d1Fixture.upsert(env, validRecords(env, inputs), now - 60_000);
  return { origin, env };
}

describe("repeats of the feed and news sitemaps", () => {
  for (const path of ["/sitemap-feed.atom", "/sitemap-news.xml"]) {
    it(`answer ${path} again, conditional or not, with no D1 query`, async () => {
      const { origin, env } = await seeded("repeat");
      const counted = countingEnv(env);
      const first = await call(counted.env, `${origin}${path}`);
      expect(first.status).toBe(200);
      const body = await first.text();
      const etag = first.headers.get("ETag")!;
      expect(counted.queries()).toBeGreaterThan(0);

      counted.reset();
      const conditional = await call(counted.env, `${origin}${path}`, { headers: { "If-None-Match": etag } });
      expect(conditional.status).toBe(304);
      const again = await call(counted.env, `${origin}${path}`);
      expect(again.status).toBe(200);
      expect(again.headers.get("ETag")).toBe(etag);
      expect(await again.text()).toBe(body);
      const head = await call(counted.env, `${origin}${path}`, { method: "HEAD" });
      expect(head.headers.get("ETag")).toBe(etag);
      expect(counted.queries()).toBe(0);
    });
  }

  it("answers a news file past the end with 404 and no D1 query once the count is known", async () => {
    const { origin, env } = await seeded("repeat-news");
    const counted = countingEnv(env);
    expect((await call(counted.env, `${origin}/sitemap-news.xml`)).status).toBe(200);
    counted.reset();
    for (const n of [2, 7, 999]) expect((await call(counted.env, `${origin}/sitemap-news${n}.xml`)).status).toBe(404);
    expect(counted.queries()).toBe(0);
  });
});
