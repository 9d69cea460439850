/**
 * A registered site's admin calls per minute (docs/tenants.md "Quotas"), each counted by a Cloudflare
 * Rate Limiting binding (wrangler.jsonc `ratelimits`, counted per location) keyed by the site:
 *
 * - writes of its token: SITE_WRITE_LIMITER, 120 per 60 s. Two writes a second, each up to
 *   ADMIN_MAX_RECORDS records, is more than any regeneration publishes; past it one tenant would be
 *   spending a shared database's writes (D1 runs one write at a time) and the deployment's queue on its own.
 * - reads of its token and of its sessions on its host: SITE_READ_LIMITER, 300 per 60 s. A status
 *   read is ~14 D1 queries, so at most ~70 queries a second on the site's database, a few per cent of
 *   what a database shared with other tenants runs one query at a time; above what the import's wait
 *   polls (`GET /status` every 250 ms) and a dashboard need. A session counts too: any script on the
 *   tenant's pages carries its cookie.
 *
 * The platform's credentials (its token, an Access service token, its session on its own host, a
 * person's Access JWT) are not limited here: they are the platform's own budget. Without a binding (a
 * configuration from before it) its calls are not limited: logged once per isolate.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../../http/app-env.ts";
import { onPlatformHost } from "../auth.ts";
import { AdminError } from "../errors.ts";

/** The bindings' period (wrangler.jsonc `simple.period`): the Retry-After of a refusal. */
const PERIOD_S = 60;
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

interface RateLimiter {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

/** Each limit: its binding, its number (as wrangler.jsonc sets it, for the refusal's message) and its error. */
const LIMITS = {
  write: { binding: "SITE_WRITE_LIMITER", perMinute: 120, error: "too_many_writes", what: "writes" },
  read: { binding: "SITE_READ_LIMITER", perMinute: 300, error: "too_many_reads", what: "reads" },
} as const;
type Limit = (typeof LIMITS)[keyof typeof LIMITS];

const warned = new Set<string>();

function limiterOf(env: object, limit: Limit): RateLimiter | null {
  const binding = (env as Record<string, unknown>)[limit.binding] as Partial<RateLimiter> | undefined;
  if (binding && typeof binding.limit === "function") return binding as RateLimiter;
  if (!warned.has(limit.binding)) {
    warned.add(limit.binding);
    console.warn(
      `${limit.binding} binding is missing: registered sites' admin ${limit.what} are not rate limited (wrangler.jsonc "ratelimits", docs/tenants.md)`,
    );
  }
  return null;
}

/** Which of the site's limits this call counts against: its token's writes; its token's and its sessions' reads; null for the platform's credentials. */
function limitOf(c: Context<AppEnv>): Limit | null {
  const via = c.var.principal?.via;
  if (!READS.has(c.req.method)) return via === "site-token" ? LIMITS.write : null;
  return via === "site-token" || (via === "session" && !onPlatformHost(c)) ? LIMITS.read : null;
}

/** After sign-in: a site's call past its rate is 429 with Retry-After, nothing read or written. */
export const siteRateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const limit = limitOf(c);
  const limiter = limit && limiterOf(c.env, limit);
  if (limit && limiter && !(await limiter.limit({ key: c.var.origin })).success) {
    throw new AdminError(
      429,
      { error: limit.error, message: `this site's ${limit.what} are at most ${limit.perMinute} a minute: try again in ${PERIOD_S} seconds` },
      { "Retry-After": String(PERIOD_S) },
    );
  }
  await next();
};
