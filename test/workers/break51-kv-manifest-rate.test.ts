/**
 * break51, issue 51 Deliver 2 (KV: one write a second per key) against the request path. A request
 * that finds no manifest builds it within MANIFEST_REQUEST_ROWS and saves it (src/sitemaps.ts
 * `builtWithin`: `await deps.manifests.save(built.manifest)`, not caught); with MANIFEST_STORE=kv
 * the save is one KV write of the site's one key `m#{origin}` (src/adapters/kv/manifest-store.ts).
 * Nothing shares a build between requests (src/manifest/location-cache.ts `requestManifest`), so
 * two first requests at once each build and each write that key within the same second: production
 * answers the second 429 and that request fails; the enforcing meter refuses it the same way.
 * The KV deployment (URL_SOURCE=kv, MANIFEST_STORE=kv: test/workers/fixtures/kv.ts), real KV and
 * writer objects, through the Worker's entry.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Meter, metered } from "../../src/jobs/meter.ts";
import { meteredEnv } from "../../src/jobs/metered-env.ts";
import { kvFixture } from "./fixtures/kv.ts";
import { call, freshOrigin, validRecords } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

/** A small KV site with records and no manifest yet (as after its first write, before its regeneration). */
async function freshKvSite(): Promise<{ origin: string; e: Env }> {
  const origin = freshOrigin("b51-kv-manifest");
  const e = kvFixture.env({ SITES: origin });
  const inputs = Array.from({ length: 20 }, (_, i) => ({ loc: `${origin}/page/${i}` }));
  await kvFixture.upsert(e, validRecords(e, inputs), Date.now() - 3_600_000);
  return { origin, e };
}

describe("the first requests of a KV site without a manifest", () => {
  it("control: two one after the other: both 200 (the second reads the manifest the first saved)", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const { origin, e } = await freshKvSite();
    const first = await call(e, `${origin}/sitemap.xml`);
    const second = await call(e, `${origin}/sitemap.xml`);
    expect([first.status, second.status]).toEqual([200, 200]);
  });

  it("two at once: both 200", async () => {
    // Observed on main: [200, 500]; the second's save is refused: "KV PUT failed: 429 Too Many Requests:
    // the key was written 15 ms ago (one write a second per key)".
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void errors.push(args.map(String).join(" ")));
    const { origin, e } = await freshKvSite();
    const answers = await Promise.all([call(e, `${origin}/sitemap.xml`), call(e, `${origin}/sitemap.xml`)]);
    expect(
      answers.map((r) => r.status),
      errors.join("\n").slice(0, 600),
    ).toEqual([200, 200]);
  });

  it("a save refused by the key's rate (another isolate wrote it a moment ago): the request serves what it built", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void errors.push(args.map(String).join(" ")));
    const { origin, e } = await freshKvSite();
    // A write of the manifest's key this second, as the meter sees every write of the binding in the isolate.
    await metered(new Meter(), () => meteredEnv(e).URLS.delete(`m#${origin}`));
    const res = await call(e, `${origin}/sitemap.xml`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(`${origin}/sitemap-`);
    expect(errors.join("\n")).toContain("sitemap.manifest.save-failed");
  });
});
