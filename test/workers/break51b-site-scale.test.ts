/**
 * break51b, issue 51 Deliver 3: "no loop over a site's configuration in one invocation: status and
 * the health page read every mirror's and job's state in one query each; ... a sync or mirror scope
 * of any size passes its sites as one JSON parameter". One JSON parameter is one D1 value, and a D1
 * value is at most 2,000,000 bytes (D1 "Limits", read 2026-11-28: "Maximum string, BLOB or table
 * row size"), so "of any size" holds only if something bounds the list. Attacked with the largest
 * mirror list a registered site can be given through the platform API, through the Worker's entry,
 * enforcing meter, real D1.
 */
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { bearer } from "./support/admin.ts";
import { call } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const registeredHere: string[] = [];
afterEach(async () => {
  await baseEnv.DB.prepare("DELETE FROM registry_sites WHERE origin IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify(registeredHere.splice(0)))
    .run();
});

describe("Deliver 3: a site's mirror list of any size", () => {
  const register = (e: Env, origin: string, setting: string) =>
    call(e, "http://localhost:8787/sitemap-admin/sites", {
      method: "POST",
      headers: { ...bearer, "Content-Type": "application/json" },
      body: JSON.stringify({ origin, settings: { MIRROR_SITEMAPS: setting } }),
    });
  /** As many of the shortest mirror URLs on `origin` as `chars` characters of setting hold. */
  const shortest = (origin: string, chars: number): string[] => {
    const urls: string[] = [];
    for (let i = 0; urls.join(" ").length + ` ${origin}/${i}`.length <= chars; i++) urls.push(`${origin}/${i}`);
    return urls;
  };

  // Held: the platform API caps a setting at 16,384 characters, so no registered site's mirror list
  // comes near 2,000,000 bytes as JSON; the most mirror URLs a setting can name (the shortest URLs
  // on the site's own host) still answer status 200, every mirror listed.
  it("the most mirror URLs one setting can name: registered, and the site's status answers 200 listing each; one character more is refused", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = `https://b51b-${Math.random().toString(36).slice(2, 7)}.test`;
    const e = { ...baseEnv } as Env;
    const urls = shortest(origin, 16_384);
    expect(urls.length).toBeGreaterThan(500);
    const tooLong = await register(e, origin, `${urls.join(" ")} ${origin}/${"x".repeat(16_384 - urls.join(" ").length)}`);
    expect(tooLong.status).toBe(400);
    const created = await register(e, origin, urls.join(" "));
    const answer = (await created.json()) as { token?: string };
    expect(created.status, JSON.stringify(answer).slice(0, 300)).toBe(201);
    registeredHere.push(origin);
    const status = await call(e, `${origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer ${answer.token}` } });
    const text = await status.text();
    expect(status.status, text.slice(0, 300)).toBe(200);
    expect((JSON.parse(text) as { mirrors: unknown[] }).mirrors).toHaveLength(urls.length);
  }, 180_000);
});
