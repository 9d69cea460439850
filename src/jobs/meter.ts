/**
 * Cloudflare's per-invocation limits, counted and enforced where they apply: at the bindings. The
 * local runtime (wrangler dev, Miniflare, the vitest pool) enforces none of them, so the Worker's
 * entry (src/index.ts) runs every invocation — a request, the cron, a queue batch, a call to or an
 * alarm of the KV writer object — under a meter that counts each D1 query, KV operation, queue send,
 * Durable Object call, Cache API call and outbound `fetch` (src/jobs/metered-env.ts), and throws as
 * production does once one passes its limit. In production the same meter only agrees with the
 * platform: the limits are the platform's own, read strictly (docs/capacity.md "Limits" cites the
 * pages and the date they were read, and says why the meter enforces there too).
 *
 * How: each wrapped call finds its invocation's meter in an AsyncLocalStorage (compatibility flag
 * `nodejs_als`): concurrent requests in one isolate each count their own. A response body read after
 * its handler returned runs in no invocation's context of its own (the runtime pulls it), so a body
 * that reads bindings is made with `invocationStream`, which pulls it in the context of the
 * invocation that made it, and a callback the runtime calls late (a transform's `flush` or `cancel`)
 * is bound to it with `inInvocation`. A call outside any invocation (a test calling a module with its own env)
 * is not counted: there is no fallback that could charge it to another request.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { JobUsage } from "./store.ts";

/**
 * Workers Paid, per invocation (read 2026-11-28). D1 "Limits": 1,000 queries per Worker invocation.
 * KV "Limits": "up to 1,000 operations to external services (for example, 500 Workers KV reads and
 * 500 R2 reads)". Read together, the stricter reading: ONE budget of 1,000 for D1, KV and the other
 * Cloudflare services a Worker calls (queues, Durable Objects, the Cache API). Workers "Limits":
 * 10,000 subrequests (fetch and calls to Cloudflare services, all of the above included).
 */
export const PAID_LIMITS = { serviceCalls: 1_000, subrequests: 10_000 } as const;
export type InvocationLimits = { readonly [K in keyof typeof PAID_LIMITS]: number };

/** What production answers past a limit: the call fails; the invocation goes on (and usually fails). */
export class InvocationLimitError extends Error {
  override readonly name = "InvocationLimitError";
}

/** What one invocation asks of the platform, each a subrequest; all but `fetches` a service call. */
export type Counted = "d1Queries" | "kvOperations" | "queueSends" | "objectCalls" | "cacheCalls" | "fetches";

const SERVICE_CALLS: readonly Counted[] = ["d1Queries", "kvOperations", "queueSends", "objectCalls", "cacheCalls"];

const int = (n: number): string => n.toLocaleString("en-US");

export class Meter {
  d1Queries = 0;
  kvOperations = 0;
  queueSends = 0;
  objectCalls = 0;
  cacheCalls = 0;
  fetches = 0;
  readonly limits: InvocationLimits;
  /** false: a limit passed is logged (once) and kept in `passed`, and nothing is refused (INVOCATION_LIMITS=count). */
  readonly enforce: boolean;
  /** The first limit passed, when not enforced. */
  passed: string | null = null;
  readonly #startedAt: number;

  constructor(limits: InvocationLimits = PAID_LIMITS, startedAt = Date.now(), enforce = true) {
    this.limits = limits;
    this.#startedAt = startedAt;
    this.enforce = enforce;
  }

  /** Calls against the one shared budget of Cloudflare service calls. */
  get serviceCalls(): number {
    return this.d1Queries + this.kvOperations + this.queueSends + this.objectCalls + this.cacheCalls;
  }

  /** Every call through a binding, the Cache API or fetch is a subrequest. */
  get subrequests(): number {
    return this.serviceCalls + this.fetches;
  }

  /** Counts `n` calls; throws (nothing sent) when they would pass a limit, as production does. */
  count(what: Counted, n = 1): void {
    const over =
      SERVICE_CALLS.includes(what) && this.serviceCalls + n > this.limits.serviceCalls
        ? `Too many API requests by single worker invocation: ${int(this.serviceCalls + n)} calls to D1, KV and other Cloudflare services (${this.#split(what, n)}; the limit is ${int(this.limits.serviceCalls)} together)`
        : this.subrequests + n > this.limits.subrequests
          ? `Too many subrequests by single worker invocation: ${int(this.subrequests + n)} subrequests (the limit is ${int(this.limits.subrequests)})`
          : null;
    if (over !== null && this.enforce) throw new InvocationLimitError(over);
    if (over !== null && this.passed === null) {
      this.passed = over;
      console.warn(JSON.stringify({ event: "sitemap.limit.passed", message: over }));
    }
    this[what] += n;
  }

  #split(what: Counted, n: number): string {
    const of = (k: Counted): number => this[k] + (k === what ? n : 0);
    return `${int(of("d1Queries"))} D1 queries, ${int(of("kvOperations"))} KV operations, ${int(of("queueSends"))} queue sends, ${int(of("objectCalls"))} Durable Object calls, ${int(of("cacheCalls"))} Cache API calls`;
  }

  reading(now = Date.now()): JobUsage {
    return {
      d1Queries: this.d1Queries,
      kvOperations: this.kvOperations,
      queueSends: this.queueSends,
      serviceCalls: this.serviceCalls,
      durationMs: now - this.#startedAt,
    };
  }
}

const invocation = new AsyncLocalStorage<Meter>();

/** Runs `fn` as one invocation counted by `meter` (the entry: each fetch, scheduled and queue call; each call to the writer object). */
export function metered<T>(meter: Meter, fn: () => T): T {
  return invocation.run(meter, fn);
}

/** The running invocation's meter, if any. */
export function currentMeter(): Meter | undefined {
  return invocation.getStore();
}

/**
 * `fn`, called later from wherever the runtime calls it (a stream's `flush` or `cancel`, pulled or
 * cancelled by the client after the handler returned), run in the invocation running now, the one
 * that made it, with what it starts (`waitUntil` work) counted there too. Outside an invocation, as is.
 */
export function inInvocation<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  const meter = invocation.getStore();
  return meter ? (...args) => invocation.run(meter, () => fn(...args)) : fn;
}

/** Counts against the running invocation, throwing past its limit (a rejected promise, as the bindings fail). */
export function counted<T>(what: Counted, n: number, call: () => T): T {
  const meter = invocation.getStore();
  if (meter) {
    try {
      meter.count(what, n);
    } catch (err) {
      return Promise.reject(err) as T;
    }
  }
  return call();
}

/**
 * `stream` read in the context of the invocation running now (the one that made it), however late
 * and from wherever the runtime pulls it: what a live body reads after its handler returned counts
 * against its own request, never against another one overlapping it. Outside an invocation, as is.
 */
export function invocationStream<T>(stream: ReadableStream<T>): ReadableStream<T> {
  const meter = invocation.getStore();
  if (!meter) return stream;
  const reader = stream.getReader();
  return new ReadableStream<T>(
    {
      pull: (controller) =>
        invocation.run(meter, async () => {
          const read = await reader.read();
          if (read.done) controller.close();
          else controller.enqueue(read.value);
        }),
      cancel: (reason) => invocation.run(meter, () => reader.cancel(reason)),
    },
    { highWaterMark: 0 },
  );
}
