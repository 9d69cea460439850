/**
 * Admin writes per registered site's token (docs/tenants.md "Quotas"): Cloudflare's Rate Limiting
 * binding SITE_WRITE_LIMITER (wrangler.jsonc `ratelimits`: 120 per 60 s, counted per location),
 * keyed by the site. Two writes a second, each up to ADMIN_MAX_RECORDS records, is more than any
 * regeneration publishes; past it one tenant would be spending a shared database's writes (D1 runs
 * one write at a time) and the deployment's queue on its own. The platform's credential is not
 * limited here: it is the platform's own budget.
 *
 * Without the binding (a configuration from before it) writes are not limited: logged once per isolate.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../http/app-env.ts";
import { AdminError } from "../errors.ts";

const BINDING = "SITE_WRITE_LIMITER";
/** The binding's period (wrangler.jsonc `simple.period`): the Retry-After of a refusal. */
const PERIOD_S = 60;
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

interface RateLimiter {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

let warned = false;

function limiterOf(env: object): RateLimiter | null {
  const binding = (env as Record<string, unknown>)[BINDING] as Partial<RateLimiter> | undefined;
  if (binding && typeof binding.limit === "function") return binding as RateLimiter;
  if (!warned) {
    warned = true;
    console.warn(`${BINDING} binding is missing: registered sites' admin writes are not rate limited (wrangler.jsonc "ratelimits", docs/tenants.md)`);
  }
  return null;
}

/** After sign-in: a site token's write past its site's rate is 429 with Retry-After, nothing read or written. */
export const siteWriteLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.var.principal?.via === "site-token" && !READS.has(c.req.method)) {
    const limiter = limiterOf(c.env);
    if (limiter && !(await limiter.limit({ key: c.var.origin })).success) {
      throw new AdminError(
        429,
        { error: "too_many_writes", message: `this site's token writes at most 120 times a minute: try again in ${PERIOD_S} seconds` },
        { "Retry-After": String(PERIOD_S) },
      );
    }
  }
  await next();
};
