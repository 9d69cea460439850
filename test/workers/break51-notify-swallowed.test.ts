/**
 * break51, issue 51 Deliver 4: "an InvocationLimitError (or any error a step cannot handle) is never
 * swallowed: the job fails, retries, reaches the dead-letter queue, and status says so". Made true
 * for the mirror (src/mirror/run.ts throws on), not for the notify job: the notifier "never throws"
 * (src/notify/notifier.ts `notifySites`: `catch (error) { log.error(…) }` around each site's run,
 * and `store.retired()`'s failure returns an empty report), so src/jobs/notify.ts returns an
 * outcome and the consumer records a success: a notify job whose state store fails (D1 failing, or
 * the invocation's limit refusing its query) is acknowledged, never retried, never dead, and its
 * job shows idle with no error while nothing is ever announced. Through the Worker's queue entry,
 * real D1 with the notifier's tables failing as D1 fails ("D1_ERROR: Network connection lost.");
 * the job's own table works. Control: the same job with D1 answering sends its ping.
 *
 * The same for `gsc-status` (src/gsc/scheduled.ts caught every error of a site's read and answered
 * no report): its state table failing, the step must fail, be retried and name the error. Google's
 * own failures stay recorded per site (test/workers/gsc-status.test.ts).
 */
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { InvocationLimitError } from "../../src/jobs/meter.ts";
import { services } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { pages, serviceAccountKey, siteEnv, upsert } from "./notify-support.ts";
import { bearer } from "./support/admin.ts";
import { deliver } from "./support/jobs.ts";
import { call, freshOrigin } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

/** `db` whose statements on the tables `tables` matches fail when run, as D1 fails them. */
function failingTables(db: D1Database, tables: RegExp): D1Database {
  return new Proxy(db, {
    get(target, name) {
      if (name === "prepare")
        return (sql: string) => {
          const statement = target.prepare(sql);
          if (!tables.test(sql)) return statement;
          const fail = () => Promise.reject(new Error("D1_ERROR: Network connection lost."));
          const failing = (s: D1PreparedStatement): D1PreparedStatement =>
            new Proxy(s, {
              get(t, m) {
                if (m === "bind") return (...args: unknown[]) => failing(t.bind(...args));
                if (m === "run" || m === "all" || m === "first" || m === "raw") return fail;
                const v = Reflect.get(t, m, t) as unknown;
                return typeof v === "function" ? v.bind(t) : v;
              },
            });
          return failing(statement);
        };
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const { pem: PEM } = await serviceAccountKey();
const TOKEN_URL = "https://oauth.test/token";

/** Each job with the variables it needs, and the tables it keeps its own state in. */
const JOBS = {
  notify: { tables: /notify_/, vars: (): Record<string, string> => ({ PING_URLS: "https://ping.test/ping?sitemap={sitemap}" }) },
  "gsc-status": {
    tables: /gsc_/,
    vars: (): Record<string, string> => ({
      GSC_SERVICE_ACCOUNT: JSON.stringify({ type: "service_account", client_email: "sitemaps@p.iam.gserviceaccount.com", private_key: PEM }),
      GSC_TOKEN_URL: TOKEN_URL,
      GSC_API_BASE: "https://gsc.test",
    }),
  },
} as const;

async function runOnce(kind: keyof typeof JOBS, failing: boolean, refusedFetch = false) {
  vi.spyOn(console, "log").mockImplementation(() => undefined);
  vi.spyOn(console, "warn").mockImplementation(() => undefined);
  vi.spyOn(console, "error").mockImplementation(() => undefined);
  const origin = freshOrigin(`b51-${kind}-swallowed`);
  const e = siteEnv(origin, JOBS[kind].vars());
  await upsert(e, pages(origin, 3), Date.now() - 3_600_000);
  await rebuildManifest(services(e), origin);
  const fetched: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
    const url = String(input instanceof Request ? input.url : input);
    fetched.push(url);
    // What the invocation's meter throws when its subrequests are spent (src/jobs/metered-env.ts): nothing goes out.
    if (refusedFetch) throw new InvocationLimitError("Too many subrequests by single Worker invocation");
    if (url === TOKEN_URL) return Response.json({ access_token: "ya29.swallowed", expires_in: 3599 });
    if (url.startsWith("https://gsc.test/")) return Response.json({ sitemap: [] });
    return new Response("ok");
  });
  const run = failing ? ({ ...e, DB: failingTables(baseEnv.DB, JOBS[kind].tables) } as Env) : e;
  const result = await deliver(run, { kind, origin, trigger: "test", step: 0 });
  const status = (await (await call(e, `${origin}/sitemap-admin/status`, { headers: bearer })).json()) as {
    jobs: { kind: string; state: string; error: string | null }[];
    notifications: { target: string; failures: number; lastError: string | null }[];
  };
  return { result, fetched, job: status.jobs.find((j) => j.kind === kind), notifications: status.notifications };
}

describe("a notify step whose state store fails", () => {
  it("control: D1 answering, the step pings and ends idle with no error", async () => {
    const { result, fetched, job } = await runOnce("notify", false);
    expect(result.retryMessages).toEqual([]);
    expect(fetched).toHaveLength(1);
    expect(job).toMatchObject({ state: "idle", error: null });
  });

  it("fails and is retried, and status names the error", async () => {
    // Observed on main: acknowledged (no retry), nothing pinged, the job idle with error null.
    const { result, fetched, job } = await runOnce("notify", true);
    expect(fetched).toEqual([]);
    expect(result.retryMessages.length).toBeGreaterThan(0);
    expect(job?.error ?? "").toContain("D1_ERROR");
  });
});

describe("a notify step whose request the invocation's own limit refuses", () => {
  it("fails and is retried, and the engine's target records no failure of its own", async () => {
    // Before: the refusal was read as a network error of the engine (status 0), the target backed off, the step acknowledged.
    const { result, job, notifications } = await runOnce("notify", false, true);
    expect(result.retryMessages.length).toBeGreaterThan(0);
    expect(job?.error ?? "").toContain("InvocationLimitError");
    expect(notifications.map((n) => [n.failures, n.lastError])).toEqual([[0, null]]);
  });
});

describe("a gsc-status step whose state store fails", () => {
  it("control: D1 answering, the step reads Google's list and ends idle with no error", async () => {
    const { result, fetched, job } = await runOnce("gsc-status", false);
    expect(result.retryMessages).toEqual([]);
    expect(fetched.map((u) => new URL(u).host)).toEqual(["oauth.test", "gsc.test"]);
    expect(job).toMatchObject({ state: "idle", error: null });
  });

  it("fails and is retried, and status names the error", async () => {
    // Observed before the fix: acknowledged with outcome "nothing", the job idle with error null.
    const { result, fetched, job } = await runOnce("gsc-status", true);
    expect(fetched).toEqual([]);
    expect(result.retryMessages.length).toBeGreaterThan(0);
    expect(job?.error ?? "").toContain("D1_ERROR");
  });
});
