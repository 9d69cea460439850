/**
 * break51b, issue 51 Deliver 6: "every job kind has a time budget, and a lease renewed while its
 * step runs". The consumer hands every handler its step's deadline (src/jobs/consumer.ts:
 * `deadline: startedAt + STEP_BUDGET_MS`, src/jobs/budget.ts: "a step stops taking on work at half
 * of [limits.cpu_ms]"). A handler that never reads it has no time budget: attacked with the
 * `gsc-status` job (src/jobs/gsc-status.ts), whose read is a token request, `sitemaps.list`, then the
 * list under each index Google knows, one after the other, each with its own NOTIFY_TIMEOUT_MS (up to
 * 60,000 ms). Google is faked at the fetch boundary, answering each request after a delay; the step
 * is given a deadline that passes while its first request is in flight, on real D1 under the
 * enforcing meter.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { gscStatusJob } from "../../src/jobs/gsc-status.ts";
import { Meter, metered } from "../../src/jobs/meter.ts";
import { meteredEnv } from "../../src/jobs/metered-env.ts";
import type { JobScheduler } from "../../src/jobs/scheduler.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { pages, serviceAccountKey, siteEnv, upsert } from "./notify-support.ts";
import { freshOrigin } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const TOKEN_URL = "https://oauth.test/token";
const API = "https://gsc.test";
const { pem: PEM } = await serviceAccountKey();

/** How long the fake Google takes to answer each request. */
const ANSWER_MS = 300;

describe("Deliver 6: a job step stops taking on work at its deadline", () => {
  // Found by the review: gscStatusJob did not read `c.deadline`: it started `sitemaps.list` and the
  // index's list after its deadline passed, one after the other. At NOTIFY_TIMEOUT_MS' maximum
  // (60,000) a slow Google keeps one step going ~3 minutes against a 30,000 ms budget. The
  // `crawler-ranges` job (src/jobs/crawler-ranges.ts) reads neither either (its lists go in parallel,
  // each within 10 s, so it is bounded by construction, not by a budget).
  it("gsc-status: no request to Google starts after the step's deadline", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("b51b-gsc-budget");
    const account = JSON.stringify({ type: "service_account", client_email: "sitemaps@p.iam.gserviceaccount.com", private_key: PEM });
    const e = siteEnv(origin, { GSC_SERVICE_ACCOUNT: account, GSC_TOKEN_URL: TOKEN_URL, GSC_API_BASE: API });
    await upsert(e, pages(origin, 3), Date.now() - 3_600_000);
    await rebuildManifest(services(e), origin);

    const started: { url: string; at: number }[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const request = new Request(input, init);
      started.push({ url: request.url, at: Date.now() });
      await scheduler.wait(ANSWER_MS);
      if (request.url === TOKEN_URL) return Response.json({ access_token: "ya29.budget", expires_in: 3599 });
      const sitemap = (path: string, index: boolean) => ({ path, isPending: false, isSitemapsIndex: index, lastDownloaded: "2026-02-28T09:30:00.000Z" });
      return new URL(request.url).searchParams.has("sitemapIndex")
        ? Response.json({ sitemap: [sitemap(`${origin}/sitemap-pages-1.xml`, false)] })
        : Response.json({ sitemap: [sitemap(`${origin}/sitemap.xml`, true)] });
    });

    const countedEnv = meteredEnv(e);
    const s = services(countedEnv);
    const meter = new Meter();
    const deadline = Date.now() + ANSWER_MS / 3;
    const outcome = await metered(meter, () =>
      gscStatusJob({ kind: "gsc-status", origin, trigger: "test", chain: "b51b", step: 0 } as never, {
        services: s,
        sites: null,
        env: countedEnv,
        ctx: { waitUntil: () => undefined, passThroughOnException: () => undefined, props: {} } as unknown as ExecutionContext,
        scheduler: s.jobs as JobScheduler,
        usage: () => meter.reading(),
        deadline,
        chain: "b51b",
        tookOver: false,
        continueWith: () => undefined,
      }),
    );
    // The token's request, started in time, finished; nothing started once the deadline had passed,
    // and the site stays due (nothing saved): the next step or heartbeat reads it.
    expect(outcome).toBe("budget");
    expect(started.map((r) => new URL(r.url).host)).toEqual(["oauth.test"]);
    expect(started.filter((r) => r.at >= deadline).map((r) => r.url)).toEqual([]);
    expect(await s.gsc!.state(origin)).toBeNull();
  });
});
