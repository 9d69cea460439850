/**
 * break51b, issue 51 Deliver 1: "each invocation's meter is its own, a body streamed after the
 * handler returned included (bind the stream's pull to its invocation's context; no global fallback)".
 * Attacked at the work a live body still starts when it ends: the edge cache's copy of it
 * (src/http/cache/edge.ts `storeWhenComplete`: a TransformStream whose `flush` calls `cache.put`
 * through `waitUntil`). The existing sweep (test/workers/limits-sweep.test.ts) runs its live renders
 * with EDGE_CACHE_TTL=0, so that copy never happens there; production's default is 86,400 s.
 * Run through the Worker's entry (src/index.ts) on real D1, KV and Cache, INVOCATION_LIMITS=enforce.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { demoSection } from "../../src/demo/demo-data.ts";
import worker from "../../src/index.ts";
import { Meter, currentMeter, metered } from "../../src/jobs/meter.ts";
import { newSite, write } from "./regen-support.ts";
import { watchMeters } from "./support/meters.ts";
import { call } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

/** A Cache API call and the meter running when it was made (undefined: none, so counted nowhere). */
interface CacheCall {
  method: string;
  meter: Meter | undefined;
}

/** Notes every Cache API call under the entry's counting wrapper, with the meter it was charged to. */
function witnessCache(seen: CacheCall[]): void {
  const proto = Object.getPrototypeOf(caches.default) as Record<string, (...a: unknown[]) => unknown>;
  for (const name of ["match", "put", "delete"] as const) {
    const counting = proto[name]!;
    vi.spyOn(proto, name).mockImplementation(function (this: unknown, ...args: unknown[]) {
      seen.push({ method: name, meter: currentMeter() });
      return counting.apply(this, args);
    });
  }
}

async function fetchEntry(env: Env, url: string): Promise<{ response: Response; ctx: ExecutionContext }> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(url) as Request<unknown, IncomingRequestCfProperties>, env, ctx);
  return { response, ctx };
}

describe("Deliver 1: the edge cache's copy of a live body is its own request's call", () => {
  // The body is read from another invocation's context (the runtime pulls a response's body from
  // wherever it is; an overlapping request's context is the case the claim names). Every Cache API
  // call of the request must be charged to the request's own meter: the `match` its handler made,
  // and the `put` its body's end starts.
  it.each([
    ["read under another request's meter", () => new Meter()],
    ["read from no invocation's context", () => undefined],
  ])("a live shard with the edge cache on, its body %s: the cache.put at its end is charged to its own meter", async (_label, readerMeter) => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const site = newSite("b51b-edge-put", { EDGE_CACHE_TTL: "3600", MANIFEST_CACHE_TTL: "0" });
    // Stamped before the settle window, so that the live render is of the manifest's version (stored, not no-store).
    await write(site, demoSection(site.origin, "pages", 3_000), Date.now() - 10 * 60_000);
    await (await call(site.env, `${site.origin}/sitemap.xml`)).text();
    const seen: CacheCall[] = [];
    witnessCache(seen);
    const { response, ctx } = await fetchEntry(site.env, `${site.origin}/sitemap-pages-1.xml`);
    expect(response.headers.get("x-sitemap-source")).toBe("live");
    const own = seen.find((c) => c.method === "match")?.meter;
    expect(own).toBeInstanceOf(Meter);
    const other = readerMeter();
    const body = await (other ? metered(other, () => response.text()) : response.text());
    await waitOnExecutionContext(ctx);
    expect(body.match(/<url>/g)).toHaveLength(3_000);
    const puts = seen.filter((c) => c.method === "put");
    // The copy was stored (the body ended whole) ...
    expect(puts).toHaveLength(1);
    // ... and charged to the request that rendered it: not to the reader, not to nobody.
    expect(puts[0]!.meter === own ? "own meter" : puts[0]!.meter === undefined ? "no meter" : "another request's meter").toBe("own meter");
    if (other) expect(other.cacheCalls).toBe(0);
  });
});

describe("Deliver 1: in production (INVOCATION_LIMITS unset: count) the meter refuses nothing", () => {
  // Every call made to cost 400 (support/meters.ts `charge`), so that a plain sitemap request passes
  // the shared 1,000 at its third call. Unset, the variable's default is `count`: the request must
  // answer as it would with no meter at all, the limit passed only logged; with `enforce` the same
  // request is refused, a 503 (the test is not vacuous).
  it.each([
    ["unset (the production default)", undefined, 200],
    ["enforce (the tests)", "enforce", 503],
  ] as const)("INVOCATION_LIMITS %s: a request past the shared budget answers %d", async (_label, mode, expected) => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const site = newSite("b51b-count", { EDGE_CACHE_TTL: "0", MANIFEST_CACHE_TTL: "0" });
    await write(site, demoSection(site.origin, "pages", 50), Date.now() - 10 * 60_000);
    await (await call(site.env, `${site.origin}/sitemap.xml`)).text();
    const { INVOCATION_LIMITS: _, ...unset } = site.env as Env & { INVOCATION_LIMITS?: string };
    const e = (mode === undefined ? unset : { ...unset, INVOCATION_LIMITS: mode }) as Env;
    const watch = watchMeters(400);
    const { response, ctx } = await fetchEntry(e, `${site.origin}/sitemap-pages-1.xml`);
    const body = await response.text();
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(expected);
    expect(watch.meters.length).toBeGreaterThan(0);
    expect(watch.meters.every((m) => m.enforce === (mode === "enforce"))).toBe(true);
    if (mode === undefined) {
      expect(body.match(/<url>/g)).toHaveLength(50);
      expect(watch.refused).toEqual([]);
      expect(watch.meters.some((m) => m.passed !== null)).toBe(true);
      expect(warn.mock.calls.some(([line]) => String(line).includes("sitemap.limit.passed"))).toBe(true);
    } else {
      expect(watch.refused.length).toBeGreaterThan(0);
    }
  });
});
