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
 */
import { env as baseEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { pages, siteEnv, upsert } from "./notify-support.ts";
import { bearer } from "./support/admin.ts";
import { deliver } from "./support/jobs.ts";
import { call, freshOrigin } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

/** `db` whose statements on the notifier's tables fail when run, as D1 fails them. */
function failingNotifyTables(db: D1Database): D1Database {
  return new Proxy(db, {
    get(target, name) {
      if (name === "prepare")
        return (sql: string) => {
          const statement = target.prepare(sql);
          if (!/notify_/.test(sql)) return statement;
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

async function notifyOnce(failing: boolean) {
  vi.spyOn(console, "log").mockImplementation(() => undefined);
  vi.spyOn(console, "warn").mockImplementation(() => undefined);
  vi.spyOn(console, "error").mockImplementation(() => undefined);
  const origin = freshOrigin("b51-notify-swallowed");
  const e = siteEnv(origin, { PING_URLS: "https://ping.test/ping?sitemap={sitemap}" });
  await upsert(e, pages(origin, 3), Date.now() - 3_600_000);
  const pinged: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
    pinged.push(String(input instanceof Request ? input.url : input));
    return new Response("ok");
  });
  const run = failing ? ({ ...e, DB: failingNotifyTables(baseEnv.DB) } as Env) : e;
  const result = await deliver(run, { kind: "notify", origin, trigger: "test", step: 0 });
  const status = (await (await call(e, `${origin}/sitemap-admin/status`, { headers: bearer })).json()) as {
    jobs: { kind: string; state: string; error: string | null }[];
  };
  return { result, pinged, job: status.jobs.find((j) => j.kind === "notify") };
}

describe("a notify step whose state store fails", () => {
  it("control: D1 answering, the step pings and ends idle with no error", async () => {
    const { result, pinged, job } = await notifyOnce(false);
    expect(result.retryMessages).toEqual([]);
    expect(pinged).toHaveLength(1);
    expect(job).toMatchObject({ state: "idle", error: null });
  });

  it("fails and is retried, and status names the error", async () => {
    // Observed on main: acknowledged (no retry), nothing pinged, the job idle with error null.
    const { result, pinged, job } = await notifyOnce(true);
    expect(pinged).toEqual([]);
    expect(result.retryMessages.length).toBeGreaterThan(0);
    expect(job?.error ?? "").toContain("D1_ERROR");
  });
});
