/**
 * What one invocation uses of its budget, counted at the bindings (the per-invocation limits on
 * Paid: 1,000 D1 queries, 1,000 KV operations; engines notes, D1 and KV "Limits"). The consumer
 * hands the jobs an env whose D1 databases, KV namespaces and queue producers count every call, so
 * the count covers every store the job's services reach, whoever wires them.
 */
import type { JobUsage } from "./store.ts";

export class Meter {
  d1Queries = 0;
  kvOperations = 0;
  queueSends = 0;
  readonly #startedAt: number;

  constructor(startedAt = Date.now()) {
    this.#startedAt = startedAt;
  }

  reading(now = Date.now()): JobUsage {
    return { d1Queries: this.d1Queries, kvOperations: this.kvOperations, queueSends: this.queueSends, durationMs: now - this.#startedAt };
  }
}

type AnyFunction = (...args: unknown[]) => unknown;
const has = (value: object, ...names: string[]): boolean => names.every((n) => typeof (value as Record<string, unknown>)[n] === "function");

/** Forwards every property; `count` may wrap a method by name. */
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

function meteredD1(db: D1Database, meter: Meter): D1Database {
  const originals = new WeakMap<object, D1PreparedStatement>();
  const statement = (s: D1PreparedStatement): D1PreparedStatement => {
    const wrapped = forwarding(s, (name, method) => {
      if (name === "bind") return (...args) => statement(method(...args) as D1PreparedStatement);
      if (typeof name === "string" && STATEMENT_RUNS.has(name)) {
        return (...args) => {
          meter.d1Queries++;
          return method(...args);
        };
      }
      return null;
    });
    originals.set(wrapped, s);
    return wrapped;
  };
  return forwarding(db, (name, method) => {
    if (name === "prepare") return (...args) => statement(method(...args) as D1PreparedStatement);
    if (name === "batch") {
      return (statements) => {
        const list = statements as D1PreparedStatement[];
        // Each statement of a batch counts as a query.
        meter.d1Queries += list.length;
        return method(list.map((s) => originals.get(s) ?? s));
      };
    }
    if (name === "exec" || name === "dump") {
      return (...args) => {
        meter.d1Queries++;
        return method(...args);
      };
    }
    return null;
  });
}

const KV_OPERATIONS = new Set(["get", "getWithMetadata", "put", "delete", "list"]);

function meteredKv(kv: KVNamespace, meter: Meter): KVNamespace {
  return forwarding(kv, (name, method) =>
    typeof name === "string" && KV_OPERATIONS.has(name)
      ? (...args) => {
          meter.kvOperations++;
          return method(...args);
        }
      : null,
  );
}

function meteredQueue(queue: Queue, meter: Meter): Queue {
  return forwarding(queue, (name, method) =>
    name === "send" || name === "sendBatch"
      ? (...args) => {
          meter.queueSends++;
          return method(...args);
        }
      : null,
  );
}

/** `env` with every D1 database, KV namespace and queue producer counted by `meter`. */
export function meteredEnv(env: Env, meter: Meter): Env {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(env as unknown as Record<string, unknown>)) {
    if (typeof value !== "object" || value === null) out[name] = value;
    else if (has(value, "prepare", "batch", "exec")) out[name] = meteredD1(value as D1Database, meter);
    else if (has(value, "get", "put", "list", "getWithMetadata", "delete")) out[name] = meteredKv(value as KVNamespace, meter);
    else if (has(value, "send", "sendBatch")) out[name] = meteredQueue(value as Queue, meter);
    else out[name] = value;
  }
  return out as unknown as Env;
}
