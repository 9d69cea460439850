/**
 * Counts what one invocation asks of its bindings, at the boundary, independently of the Worker's
 * own meter: every D1 statement executed (first/all/run/raw, each statement of a batch) and every
 * KV operation (get, getWithMetadata, put, delete, list).
 */
export interface Counts {
  d1: number;
  kv: number;
}

type Fn = (...args: unknown[]) => unknown;

function proxy<T extends object>(target: T, wrap: (name: string, method: Fn) => Fn | null): T {
  return new Proxy(target, {
    get(t, name) {
      const value = Reflect.get(t, name, t) as unknown;
      if (typeof value !== "function") return value;
      const method = (value as Fn).bind(t);
      return (typeof name === "string" ? wrap(name, method) : null) ?? method;
    },
  });
}

export function countingEnv(env: Env, counts: Counts, failSql: RegExp | null = null): Env {
  const real = new WeakMap<object, unknown>();
  const statement = (s: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const p = proxy(s, (name, method) => {
      if (name === "bind") return (...args) => statement(method(...args) as D1PreparedStatement, sql);
      if (["first", "all", "run", "raw"].includes(name)) {
        return (...args) => {
          counts.d1++;
          if (failSql?.test(sql)) return Promise.reject(new Error("D1_ERROR: injected failure"));
          return method(...args);
        };
      }
      return null;
    });
    real.set(p, s);
    return p;
  };
  const d1 = (db: D1Database): D1Database =>
    proxy(db, (name, method) => {
      if (name === "prepare") return (sql) => statement(method(sql) as D1PreparedStatement, String(sql));
      if (name === "batch") {
        return (list) => {
          counts.d1 += (list as unknown[]).length;
          return method((list as object[]).map((s) => real.get(s) ?? s));
        };
      }
      return null;
    });
  const kv = (ns: KVNamespace): KVNamespace =>
    proxy(ns, (name, method) =>
      ["get", "getWithMetadata", "put", "delete", "list"].includes(name)
        ? (...args) => {
            counts.kv++;
            return method(...args);
          }
        : null,
    );
  return { ...env, DB: d1(env.DB), SNAPSHOTS: kv(env.SNAPSHOTS), URLS: kv(env.URLS) };
}
