/**
 * The crossed mirror converges (issue 51, item 5): a mirror pass over a remote that changed since
 * its last pass, run by its job's chain through the real entry, crossed by up to three heartbeats
 * and by duplicate deliveries of its messages — each before, during or after a step, at generated
 * points — sends exactly the requests of the same pass alone, stays one chain, and ends idle with
 * no error, its chain's delays adding up to well under 180 s after the last heartbeat.
 */
import { createExecutionContext, createScheduledController } from "cloudflare:test";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index.ts";
import { newSite } from "./regen-support.ts";
import { type RecordingQueue, type Sent, deliver, withJobs } from "./support/jobs.ts";
import { type Answer, index, url, urlset, xml } from "./support/mirror-remote.ts";
import { call } from "./support.ts";

const ADMIN = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const CHILDREN = 24;

afterEach(() => vi.restoreAllMocks());

const heartbeat = (e: Env) => worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), e, createExecutionContext());

/** What crosses the chain after one of its deliveries: a heartbeat, or the same message delivered again; during the next delivery or after it. */
interface Crossing {
  at: number;
  what: "heartbeat" | "duplicate";
  during: boolean;
}

/** How the remote changed since the last pass: sitemaps whose URL list changed, and whether the index lists one more. */
interface Change {
  changed: number[];
  added: boolean;
}

/** A remote index of CHILDREN sitemaps of two URLs each, with ETags, every request counted. */
function remote(origin: string, mirror: string) {
  const answers = new Map<string, Answer>();
  const children = Array.from({ length: CHILDREN }, (_, i) => `${origin}/cms/c-${i}.xml`);
  const page = (i: number, version: number) =>
    answers.set(
      children[i]!,
      xml(urlset([url(`${origin}/p/${i}/a`), url(`${origin}/p/${i}/${version === 0 ? "b" : `v${version}`}`)]), `"c${i}-${version}"`),
    );
  answers.set(mirror, xml(index(children), '"index-0"'));
  for (let i = 0; i < CHILDREN; i++) page(i, 0);
  let requests = 0;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    requests++;
    const asked = String(input instanceof Request ? input.url : input);
    const answer = answers.get(asked);
    return answer
      ? answer({ url: asked, headers: new Headers(input instanceof Request ? input.headers : init?.headers) })
      : new Response("not found", { status: 404 });
  });
  return {
    requests: () => requests,
    change({ changed, added }: Change): string[] {
      for (const i of changed) page(i, 1);
      if (added) {
        children.push(`${origin}/cms/c-${CHILDREN}.xml`);
        page(CHILDREN, 0);
        answers.set(mirror, xml(index(children), '"index-1"'));
      }
      // Every URL the remote lists now.
      return children.flatMap((_, i) => [`${origin}/p/${i}/a`, `${origin}/p/${i}/${changed.includes(i) ? "v1" : "b"}`]);
    },
  };
}

/** The earliest pending message, removed from the queue. */
function next(queue: RecordingQueue): Sent | undefined {
  queue.pending.sort((a, b) => a.dueAt - b.dueAt);
  return queue.pending.shift();
}

/** Delivers one message as the queue does (a retry goes back on the queue). */
async function delivered(e: Env, queue: RecordingQueue, m: Sent): Promise<void> {
  m.attempts++;
  const result = await deliver(e, m.body, m.attempts, undefined, m.id);
  if (result.retryBatch.retry || result.retryMessages.length > 0) queue.pending.push({ ...m, dueAt: Date.now() });
}

/**
 * Delivers every pending message; `crossings` happen at the mirror's deliveries (`at`: the how-manyth),
 * while its chain goes on. The time of the last heartbeat, and how many crossings happened.
 */
async function runCrossed(e: Env, queue: RecordingQueue, crossings: readonly Crossing[]): Promise<{ lastHeartbeat: number; happened: number }> {
  let lastHeartbeat = Date.now();
  let happened = 0;
  let k = 0;
  for (let i = 0; ; i++) {
    if (i >= 300) throw new Error("the chains do not end");
    const m = next(queue);
    if (!m) return { lastHeartbeat, happened };
    // The how-manyth of the mirror's deliveries this is (counted once a delivery, not once a crossing).
    const at = m.body.kind === "mirror" ? k++ : -1;
    const here = crossings.filter((c) => c.at === at);
    const cross = async (c: Crossing) => {
      happened++;
      if (c.what === "heartbeat") {
        await heartbeat(e);
        lastHeartbeat = Date.now();
      } else {
        // A duplicate: the same message (same id) delivered again, as at-least-once delivery may.
        await deliver(e, m.body, 1, undefined, m.id);
      }
    };
    await Promise.all([delivered(e, queue, m), ...here.filter((c) => c.during).map(cross)]);
    // After a step, only while the chain goes on: a heartbeat after its end is the next cron run, not a crossing.
    const goesOn = queue.pending.some((p) => p.body.kind === "mirror");
    for (const c of here.filter((c) => !c.during && goesOn)) await cross(c);
  }
}

interface Pass {
  /** Requests of the pass after the change. */
  requests: number;
  /** Crossings that happened (one after the chain's last step does not). */
  happened: number;
  chains: number;
  state: string;
  lastError: string | null;
  job: string;
  served: string[];
  delaysAfterLastHeartbeat: number;
}

/** A mirror that converged, then its remote changed, then one pass by its chain, crossed by `crossings`. */
async function passAfterChange(name: string, change: Change, crossings: readonly Crossing[]): Promise<Pass & { listed: string[] }> {
  const site = newSite(name, { MIRROR_MAX_REQUESTS_PER_RUN: "10", MIRROR_MAX_RECORDS_PER_RUN: "100" });
  const mirror = `${site.origin}/cms/sitemap.xml`;
  const r = remote(site.origin, mirror);
  const { env: e, queue } = withJobs({ ...site.env, MIRROR_SITEMAPS: mirror } as Env);
  await heartbeat(e);
  await runCrossed(e, queue, []);
  const listed = r.change(change);
  const before = r.requests();
  const sentBefore = queue.sent.length;
  await heartbeat(e);
  const { lastHeartbeat, happened } = await runCrossed(e, queue, crossings);
  const requests = r.requests() - before;
  vi.mocked(globalThis.fetch).mockRestore();
  const mirrors = queue.sent.slice(sentBefore).filter((m) => m.body.kind === "mirror");
  const status = (await (await call(e, `${site.origin}/sitemap-admin/status`, { headers: ADMIN })).json()) as {
    jobs: { kind: string; state: string }[];
    mirrors: { state: string; lastError: string | null }[];
  };
  const body = await (await call(e, `${site.origin}/sitemap-pages-1.xml`)).text();
  return {
    requests,
    happened,
    chains: new Set(mirrors.map((m) => m.body.chain)).size,
    state: status.mirrors[0]!.state,
    lastError: status.mirrors[0]!.lastError,
    job: status.jobs.find((j) => j.kind === "mirror")!.state,
    served: [...body.matchAll(/<loc>([^<]+)<\/loc>/g)].map(([, loc]) => loc!.replace(site.origin, "")).sort(),
    delaysAfterLastHeartbeat: mirrors.filter((m) => m.dueAt >= lastHeartbeat).reduce((s, m) => s + m.delaySeconds, 0),
    listed: listed.map((loc) => loc.replace(site.origin, "")).sort(),
  };
}

const changes: fc.Arbitrary<Change> = fc.record({
  changed: fc.uniqueArray(fc.integer({ min: 0, max: CHILDREN - 1 }), { minLength: 1, maxLength: 3 }),
  added: fc.boolean(),
});
const crossings: fc.Arbitrary<Crossing[]> = fc
  .tuple(
    fc.array(fc.record({ at: fc.nat({ max: 3 }), during: fc.boolean() }), { minLength: 1, maxLength: 3 }),
    fc.array(fc.record({ at: fc.nat({ max: 3 }), during: fc.boolean() }), { maxLength: 2 }),
  )
  .map(([beats, duplicates]) => [
    ...beats.map((c) => ({ ...c, what: "heartbeat" as const })),
    ...duplicates.map((c) => ({ ...c, what: "duplicate" as const })),
  ]);

describe("a mirror pass crossed by heartbeats and duplicate deliveries", () => {
  it("after its remote changed: the requests of the same pass alone, one chain, idle with no error, the remote served", { timeout: 600_000 }, async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    let n = 0;
    await fc.assert(
      fc.asyncProperty(changes, crossings, async (change, crossed) => {
        n++;
        const alone = await passAfterChange(`crossed-alone-${n}`, change, []);
        const withCrossings = await passAfterChange(`crossed-${n}`, change, crossed);
        for (const pass of [alone, withCrossings]) {
          expect(pass).toMatchObject({ state: "idle", lastError: null, job: "idle", chains: 1 });
          expect(pass.served).toEqual(pass.listed);
          expect(pass.delaysAfterLastHeartbeat).toBeLessThan(180);
        }
        // The pass takes more than four steps, so every crossing generated happened.
        expect(withCrossings.happened).toBe(crossed.length);
        expect(withCrossings.requests).toBe(alone.requests);
      }),
      { numRuns: 4, seed: 5151 },
    );
  });
});
