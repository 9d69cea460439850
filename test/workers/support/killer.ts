/**
 * Fault injection at the bindings for regeneration tests (break53d): a D1 database and a KV
 * namespace whose Nth call, or every call from the Nth on, throws.
 */
/** Where a wrapped statement keeps D1's own (a batch takes only those). */
const TARGET = Symbol("target");

/**
 * Counts the calls made through the D1 databases and KV namespaces it wraps. From call `at` on every
 * one throws (the isolate died there); with `once`, only call `at` throws (a transient failure).
 */
export class Killer {
  calls = 0;
  readonly at: number;
  readonly once: boolean;
  constructor(at: number, once = false) {
    this.at = at;
    this.once = once;
  }
  #call<R>(name: string, call: () => Promise<R>): Promise<R> {
    if (++this.calls === this.at || (!this.once && this.calls > this.at)) return Promise.reject(new Error(`killed at call ${this.calls} (${name})`));
    return call();
  }
  kv(kv: KVNamespace): KVNamespace {
    return new Proxy(kv, {
      get: (t, prop) => {
        const value = Reflect.get(t, prop, t) as unknown;
        if (typeof value !== "function") return value;
        const bound = (value as (...a: unknown[]) => Promise<unknown>).bind(t);
        return (...args: unknown[]) => this.#call(`kv.${String(prop)}`, () => bound(...args));
      },
    });
  }
  #statement(s: D1PreparedStatement): D1PreparedStatement {
    return new Proxy(s, {
      get: (t, prop) => {
        if (prop === TARGET) return t;
        const value = Reflect.get(t, prop, t) as unknown;
        if (typeof value !== "function") return value;
        const bound = (value as (...a: unknown[]) => unknown).bind(t);
        if (prop === "bind") return (...args: unknown[]) => this.#statement(bound(...args) as D1PreparedStatement);
        return (...args: unknown[]) => this.#call(`d1.${String(prop)}`, () => bound(...args) as Promise<unknown>);
      },
    });
  }
  d1(db: D1Database): D1Database {
    return new Proxy(db, {
      get: (t, prop) => {
        const value = Reflect.get(t, prop, t) as unknown;
        if (typeof value !== "function") return value;
        const bound = (value as (...a: unknown[]) => unknown).bind(t);
        if (prop === "prepare") return (sql: string) => this.#statement(bound(sql) as D1PreparedStatement);
        // A batch of wrapped statements: the underlying ones go to D1.
        if (prop === "batch")
          return (statements: D1PreparedStatement[]) => this.#call("d1.batch", () => bound(statements.map(unwrap)) as Promise<unknown>);
        return bound;
      },
    });
  }
}
function unwrap(s: D1PreparedStatement): D1PreparedStatement {
  return (s as unknown as Record<symbol, D1PreparedStatement>)[TARGET] ?? s;
}
