/**
 * The bench routes' invocations under the real entry's enforcing meter (src/jobs/meter.ts): each
 * metered `/__bench/*` route is one invocation, counted at its bindings and failing past Workers
 * Paid's limits as production would, and its JSON answer says what it used.
 */
import { InvocationLimitError, Meter, metered } from "../../src/jobs/meter.ts";
import { meteredEnv } from "../../src/jobs/metered-env.ts";

/** The entry's meter, remembering the first limit it enforced: a product path may catch the error (a shard's snapshot that failed). */
class BenchMeter extends Meter {
  limitHit: string | null = null;

  override count(what: Parameters<Meter["count"]>[0], n = 1): void {
    try {
      super.count(what, n);
    } catch (err) {
      if (err instanceof InvocationLimitError) this.limitHit ??= err.message;
      throw err;
    }
  }
}

/** What one invocation used, as each metered route answers it (`usage`), and the limits it ran under. */
function usageOf(meter: BenchMeter): Record<string, unknown> {
  return { ...meter.reading(), subrequests: meter.subrequests, limitHit: meter.limitHit, limits: meter.limits };
}

/**
 * A bench route: `env` is the metered env (its bindings counted against `meter`) for a metered
 * route, the raw env for scaffolding (`meter` null).
 */
export type Route = (env: Env, ctx: ExecutionContext, url: URL, request: Request, meter: BenchMeter | null) => Promise<Response>;

/** A route's table entry: `metered: false` only for scaffolding that loads or inspects test data. */
export interface RouteEntry {
  metered: boolean;
  run: Route;
}

/**
 * Runs `route` as one invocation under a fresh meter on `meteredEnv(env)`, and adds `usage` to its
 * JSON answer (an error answer too: a 500 with the error, `usage` and `limit`). A body the route
 * streams reads in its invocation's context (src/jobs/meter.ts invocationStream).
 */
export async function runMetered(route: Route, env: Env, ctx: ExecutionContext, url: URL, request: Request): Promise<Response> {
  const meter = new BenchMeter();
  let response: Response;
  try {
    response = await metered(meter, () => route(meteredEnv(env), ctx, url, request, meter));
  } catch (err) {
    const error = String((err as Error)?.stack ?? err);
    return Response.json({ error, limit: err instanceof InvocationLimitError, usage: usageOf(meter) }, { status: 500 });
  }
  const body = (await response.json()) as Record<string, unknown>;
  return Response.json({ ...body, usage: usageOf(meter) }, { status: response.status });
}
