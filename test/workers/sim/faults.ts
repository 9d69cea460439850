/**
 * The simulation's faults at the bindings' boundary: an invocation killed after its n-th D1 call
 * (every later call of it fails, as when the isolate is evicted mid-step), and a queue whose next
 * send fails.
 */
import { RecordingQueue } from "../support/jobs.ts";

const DATABASES = ["DB", "PART_B", "PART_C", "PART_D"] as const;

/** `env` whose D1 bindings answer `calls` statements (a batch is one), then fail every later one. */
export function killedAfter(env: Env, calls: number): Env {
  let left = calls;
  const spend = (): void => {
    if (left-- <= 0) throw new Error("killed mid-step (simulation)");
  };
  const unwrap = new WeakMap<object, D1PreparedStatement>();
  const statement = (s: D1PreparedStatement): D1PreparedStatement => {
    const wrapped = new Proxy(s, {
      get(t, name) {
        const value = Reflect.get(t, name, t) as unknown;
        if (typeof value !== "function") return value;
        if (name === "bind") return (...args: unknown[]) => statement((value as (...a: unknown[]) => D1PreparedStatement).apply(t, args));
        if (["first", "all", "run", "raw"].includes(String(name)))
          return async (...args: unknown[]) => {
            spend();
            return (value as (...a: unknown[]) => unknown).apply(t, args);
          };
        return (value as (...a: unknown[]) => unknown).bind(t);
      },
    });
    unwrap.set(wrapped, s);
    return wrapped;
  };
  const database = (db: D1Database): D1Database =>
    new Proxy(db, {
      get(t, name) {
        const value = Reflect.get(t, name, t) as unknown;
        if (name === "prepare") return (sql: string) => statement(t.prepare(sql));
        if (name === "batch")
          return async (list: D1PreparedStatement[]) => {
            spend();
            return t.batch(list.map((s) => unwrap.get(s) ?? s));
          };
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(t) : value;
      },
    });
  const out: Record<string, unknown> = { ...env };
  for (const name of DATABASES) out[name] = database((env as unknown as Record<string, D1Database>)[name]!);
  return out as unknown as Env;
}

/** A recording JOBS queue whose next send (or sendBatch) throws when armed. */
export class FlakyQueue extends RecordingQueue {
  failNext = false;

  #fail(): void {
    if (!this.failNext) return;
    this.failNext = false;
    throw new Error("queue send failed (simulation)");
  }

  override async send(...args: Parameters<RecordingQueue["send"]>): Promise<void> {
    this.#fail();
    return super.send(...args);
  }

  override async sendBatch(...args: Parameters<RecordingQueue["sendBatch"]>): Promise<void> {
    this.#fail();
    return super.sendBatch(...args);
  }
}
