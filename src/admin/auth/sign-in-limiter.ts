/**
 * Failed sign-ins slowed per client (docs/dashboard.md "Guessing"): a wrong token in the sign-in
 * form or a wrong bearer token counts against the client (its IPv4 address, or its IPv6 /64:
 * src/admin/auth/client-address.ts) in Cloudflare's Rate Limiting binding SIGN_IN_LIMITER
 * (wrangler.jsonc `ratelimits`: 10 per 60 s). Only failures count: a signed-in session, and a
 * script with the right token, never touch it. A sign-in from another site is refused before it
 * gets here (src/admin/auth.ts), so no page elsewhere can spend an admin's failures.
 *
 * When the binding says a client is over its limit, that "no" is remembered for the rest of the
 * period in the location's Cache API (the binding counts per location too), and every sign-in by
 * that client is refused with `429` + `Retry-After` before its token is even compared: otherwise a
 * right guess would still answer 200 and tell itself apart from the wrong ones' 429. The binding
 * does the counting; the cache entry only remembers its answer (on workers.dev, where the Cache API
 * keeps nothing, a client is slowed only on its failures).
 *
 * A request without a client address (not from the internet: a service binding, a test) is counted
 * against no one and never blocked: one shared key would let any such caller lock out the others.
 * The sign-in form refuses it outright (src/admin/auth.ts); a wrong bearer token is a 401, logged.
 *
 * Without the binding (a configuration from before it), failed sign-ins are not limited: the admin
 * neither closes nor opens; it is logged once per isolate.
 */
import { AdminError } from "../errors.ts";
import { clientKey } from "./client-address.ts";
import { ADMIN_PATH } from "./paths.ts";

/** The period of the binding (wrangler.jsonc `simple.period`), and so the Retry-After of a refusal. */
const LIMIT_PERIOD_S = 60;
const LIMITER_BINDING = "SIGN_IN_LIMITER";

interface RateLimiter {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

let warned = false;

function limiterOf(env: object): RateLimiter | null {
  const binding = (env as Record<string, unknown>)[LIMITER_BINDING] as Partial<RateLimiter> | undefined;
  if (binding && typeof binding.limit === "function") return binding as RateLimiter;
  if (!warned) {
    warned = true;
    console.warn(`${LIMITER_BINDING} binding is missing: failed admin sign-ins are not rate limited (wrangler.jsonc "ratelimits", docs/dashboard.md)`);
  }
  return null;
}

/** The remembered "no", under the site's own origin (the zone whose cache it is); the count itself is per client across sites. */
async function blockKey(origin: string, client: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(client));
  const id = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${origin}${ADMIN_PATH}/.sign-in-blocked/${id}`;
}

async function cacheOrNull(): Promise<Cache | null> {
  try {
    return (globalThis as { caches?: { default?: Cache } }).caches?.default ?? null;
  } catch {
    return null;
  }
}

export const tooManyFailures = (retryAfter: number): Response =>
  new AdminError(
    429,
    { error: "too_many_failures", message: "too many failed sign-ins from this client; try again later" },
    { "Retry-After": String(retryAfter) },
  ).getResponse();

/** Seconds this client must still wait before its next sign-in, or 0. */
export async function blockedFor(env: object, request: Request, origin: string, now = Date.now()): Promise<number> {
  const client = clientKey(request);
  if (client === null || !limiterOf(env)) return 0;
  const cache = await cacheOrNull();
  if (!cache) return 0;
  try {
    const hit = await cache.match(await blockKey(origin, client));
    const until = Number(hit?.headers.get("X-Blocked-Until"));
    return Number.isFinite(until) && until > now ? Math.ceil((until - now) / 1000) : 0;
  } catch {
    return 0;
  }
}

/** Counts a failed sign-in; the seconds to wait when the client is now over its limit, else 0. */
export async function countFailure(env: object, request: Request, origin: string, now = Date.now()): Promise<number> {
  const limiter = limiterOf(env);
  if (!limiter) return 0;
  const client = clientKey(request);
  if (client === null) {
    console.warn("admin: a failed sign-in without a client address (CF-Connecting-IP) was counted against no one");
    return 0;
  }
  let allowed = true;
  try {
    allowed = (await limiter.limit({ key: `sign-in:${client}` })).success;
  } catch (err) {
    console.error("sign-in limiter failed; this failure was not counted", err);
  }
  if (allowed) return 0;
  const cache = await cacheOrNull();
  if (cache) {
    const until = now + LIMIT_PERIOD_S * 1000;
    try {
      await cache.put(
        await blockKey(origin, client),
        new Response(null, { headers: { "Cache-Control": `max-age=${LIMIT_PERIOD_S}`, "X-Blocked-Until": String(until) } }),
      );
    } catch (err) {
      console.error("sign-in limiter: could not remember the block", err);
    }
  }
  return LIMIT_PERIOD_S;
}
