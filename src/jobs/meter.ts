/**
 * Cloudflare's per-invocation limits, counted and enforced where they apply: at the bindings. The
 * local runtime (wrangler dev, Miniflare, the vitest pool) enforces none of them, so the Worker's
 * entry (src/index.ts) runs every invocation — a request, the cron, a queue batch — under a meter
 * that counts each D1 query, KV operation, queue send and outbound `fetch`, and throws as
 * production does once one passes its limit. In production the same meter only agrees with the
 * platform: the limits are the platform's own (Workers Paid, docs/capacity.md "Limits" cites the
 * pages and the date they were read).
 *
 * How: the env's bindings are wrapped once per env (so the services wired on them stay cached),
 * and each wrapped call finds its invocation's meter in an AsyncLocalStorage (compatibility flag
 * `nodejs_als`): concurrent requests in one isolate each count their own. Bindings reached other
 * than through the entry's env (a test calling a module with its own env) are not counted.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { JobUsage } from "./store.ts";

/**
 * Workers Paid, per invocation (read 2026-11-27): D1 "Limits" (queries per Worker invocation),
 * KV "Limits" (operations per invocation), Workers "Limits" (subrequests: fetch and calls to
 * Cloudflare services, D1 and KV included).
 */
export const PAID_LIMITS = { d1Queries: 1_000, kvOperations: 1_000, subrequests: 10_000 } as const;
export type InvocationLimits = { readonly [K in keyof typeof PAID_LIMITS]: number };

/** What production answers past a limit: the call fails; the invocation goes on (and usually fails). */
export class InvocationLimitError extends Error {
  override readonly name = "InvocationLimitError";
}

type Counted = "d1Queries" | "kvOperations" | "queueSends" | "fetches";

const WHAT: Record<keyof InvocationLimits, string> = {
  d1Queries: "D1 queries",
  kvOperations: "KV operations",
  subrequests: "subrequests",
};

export class Meter {
  d1Queries = 0;
  kvOperations = 0;
  queueSends = 0;
  fetches = 0;
  readonly limits: InvocationLimits;
  readonly #startedAt: number;

  constructor(limits: InvocationLimits = PAID_LIMITS, startedAt = Date.now()) {
    this.limits = limits;
    this.#startedAt = startedAt;
  }

  /** Every call through a binding or fetch is a subrequest too. */
  get subrequests(): number {
    return this.d1Queries + this.kvOperations + this.queueSends + this.fetches;
  }

  /** Counts one call; throws (nothing sent) when it would pass a limit, as production does. */
  count(what: Counted, n = 1): void {
    const over = (limit: keyof InvocationLimits, value: number): void => {
      if (value > this.limits[limit]) {
        throw new InvocationLimitError(
          `Too many API requests by single worker invocation: ${value.toLocaleString("en-US")} ${WHAT[limit]} (the limit is ${this.limits[limit].toLocaleString("en-US")})`,
        );
      }
    };
    if (what === "d1Queries") over("d1Queries", this.d1Queries + n);
    if (what === "kvOperations") over("kvOperations", this.kvOperations + n);
    over("subrequests", this.subrequests + n);
    this[what] += n;
  }

  reading(now = Date.now()): JobUsage {
    return { d1Queries: this.d1Queries, kvOperations: this.kvOperations, queueSends: this.queueSends, durationMs: now - this.#startedAt };
  }
}

const invocation = new AsyncLocalStorage<Meter>();

/**
 * The runtime carries no async context into a response body's `pull` (a live shard reads its rows
 * there, after the handler returned): such a call counts against the request that started last,
 * which is its own unless requests overlap in the isolate (then it may count against another; the
 * limits stay bounded by each path's own bounds, docs/capacity.md "Limits").
 */
let streaming: Meter | undefined;

/**
 * Runs `fn` as one invocation counted by `meter` (the entry: each fetch, scheduled and queue call).
 * `streams`: the invocation answers with a body that may read bindings after `fn` returned.
 */
export function metered<T>(meter: Meter, fn: () => T, options: { streams?: boolean } = {}): T {
  if (options.streams) streaming = meter;
  return invocation.run(meter, fn);
}

/** The running invocation's meter, if any. */
export function currentMeter(): Meter | undefined {
  return invocation.getStore();
}

/** Counts against the running invocation, throwing past its limit (a rejected promise, as the bindings fail). */
function counted<T>(what: Counted, n: number, call: () => T): T {
  const meter = invocation.getStore() ?? streaming;
  if (meter) {
    try {
      meter.count(what, n);
    } catch (err) {
      return Promise.reject(err) as T;
    }
  }
  return call();
}

type AnyFunction = (...args: unknown[]) => unknown;
const has = (value: object, ...names: string[]): boolean => names.every((n) => typeof (value as Record<string, unknown>)[n] === "function");

/** Forwards every property; `wrap` may replace a method by name. */
function forwarding<T extends object>(target: T, wrap: (name: string | symbol, method: AnyFunction) => AnyFunction | null): T {
  return new Proxy(target, {
    get(t, name) {
      const value = Reflect.get(t, name, t) as unknown;
      if (typeof value !== "function") return value;
      const method = (value as AnyFunction).bind(t);
      return wrap(name, method) ?? method;
    },
  });
}

const STATEMENT_RUNS = new Set(["first", "all", "run", "raw"]);

function meteredD1(db: D1Database): D1Database {
  const originals = new WeakMap<object, D1PreparedStatement>();
  const statement = (s: D1PreparedStatement): D1PreparedStatement => {
    const wrapped = forwarding(s, (name, method) => {
      if (name === "bind") return (...args) => statement(method(...args) as D1PreparedStatement);
      if (typeof name === "string" && STATEMENT_RUNS.has(name)) return (...args) => counted("d1Queries", 1, () => method(...args));
      return null;
    });
    originals.set(wrapped, s);
    return wrapped;
  };
  const wrapDb = (inner: D1Database): D1Database =>
    forwarding(inner, (name, method) => {
      if (name === "prepare") return (...args) => statement(method(...args) as D1PreparedStatement);
      // Counted per statement: the limits page does not say a batch is one query, so the stricter reading.
      if (name === "batch") {
        return (statements) => {
          const list = statements as D1PreparedStatement[];
          return counted("d1Queries", list.length, () => method(list.map((s) => originals.get(s) ?? s)));
        };
      }
      if (name === "exec" || name === "dump") return (...args) => counted("d1Queries", 1, () => method(...args));
      if (name === "withSession") return (...args) => wrapDb(method(...args) as D1Database);
      return null;
    });
  return wrapDb(db);
}

const KV_OPERATIONS = new Set(["get", "getWithMetadata", "put", "delete", "list"]);

function meteredKv(kv: KVNamespace): KVNamespace {
  return forwarding(kv, (name, method) =>
    typeof name === "string" && KV_OPERATIONS.has(name) ? (...args) => counted("kvOperations", 1, () => method(...args)) : null,
  );
}

function meteredQueue(queue: Queue): Queue {
  return forwarding(queue, (name, method) =>
    name === "send" || name === "sendBatch" ? (...args) => counted("queueSends", 1, () => method(...args)) : null,
  );
}

const meteredEnvs = new WeakMap<object, Env>();

/**
 * `env` with every D1 database, KV namespace and queue producer counted against the running
 * invocation's meter; the same object for the same env, so what is wired on it stays cached.
 */
export function meteredEnv(env: Env): Env {
  const known = meteredEnvs.get(env);
  if (known) return known;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(env as unknown as Record<string, unknown>)) {
    if (typeof value !== "object" || value === null) out[name] = value;
    else if (has(value, "prepare", "batch", "exec")) out[name] = meteredD1(value as D1Database);
    else if (has(value, "get", "put", "list", "getWithMetadata", "delete")) out[name] = meteredKv(value as KVNamespace);
    else if (has(value, "send", "sendBatch")) out[name] = meteredQueue(value as Queue);
    else out[name] = value;
  }
  const metered = out as unknown as Env;
  meteredEnvs.set(env, metered);
  meteredEnvs.set(metered, metered);
  return metered;
}

let fetchCounted = false;

/** Counts every outbound `fetch` of an invocation as a subrequest (installed once by the entry). */
export function countFetches(): void {
  if (fetchCounted) return;
  fetchCounted = true;
  const original = globalThis.fetch;
  globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => counted("fetches", 1, () => original(input, init))) as typeof fetch;
}
