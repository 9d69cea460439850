/**
 * A Durable Object class whose every call (each RPC method, `fetch`) and alarm runs as an invocation
 * of its own under its own meter, on a metered env: the object's KV reads and writes count against
 * its own limits, as production counts them, not against the Worker invocation that called it (for
 * which the call itself is one service call: src/jobs/metered-env.ts).
 */
import { type Meter, metered } from "./meter.ts";
import { meteredEnv } from "./metered-env.ts";

// biome-ignore lint/suspicious/noExplicitAny: a mixin's constructor must take any arguments (TypeScript's rule)
type ObjectClass = new (...args: any[]) => object;

export function meteredObject<T extends ObjectClass>(Base: T, meterOf: (env: Env) => Meter): T {
  const Metered = class extends Base {
    // biome-ignore lint/suspicious/noExplicitAny: the runtime's (ctx, env), passed on
    constructor(...args: any[]) {
      super(args[0], meteredEnv(args[1] as Env));
      invocationEnv.set(this, args[1] as Env);
    }
  };
  for (const name of Object.getOwnPropertyNames(Base.prototype)) {
    const method = (Base.prototype as Record<string, unknown>)[name];
    if (name === "constructor" || typeof method !== "function") continue;
    Object.defineProperty(Metered.prototype, name, {
      value(this: object, ...args: unknown[]) {
        return metered(meterOf(invocationEnv.get(this)!), () => (method as (...a: unknown[]) => unknown).apply(this, args));
      },
      writable: true,
      configurable: true,
    });
  }
  return Metered;
}

const invocationEnv = new WeakMap<object, Env>();
