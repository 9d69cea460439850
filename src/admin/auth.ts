/**
 * Admin authentication: `Authorization: Bearer <ADMIN_TOKEN>` (hono/bearer-auth). Without a
 * configured token every admin path is 404 (the API does not exist); a wrong or missing token is
 * 401 with no detail.
 */
import type { MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { readVariable } from "../config/variable.ts";
import { ADMIN_TOKEN } from "../config/variables.ts";
import type { AppEnv } from "../http/app-env.ts";
import { AdminError } from "./errors.ts";

const encoder = new TextEncoder();

/** The admin token, or null when unset or bad: a bad one keeps the API off (logged once per isolate, and `npm run check-config` names it). */
function adminToken(env: object): string | null {
  try {
    return readVariable(env, ADMIN_TOKEN);
  } catch {
    return null;
  }
}

/**
 * Constant-time comparison: both sides are hashed first so the compared buffers always have the
 * same length (timingSafeEqual requires it, and lengths must not leak either).
 */
async function tokensEqual(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([crypto.subtle.digest("SHA-256", encoder.encode(given)), crypto.subtle.digest("SHA-256", encoder.encode(expected))]);
  return crypto.subtle.timingSafeEqual(a, b);
}

/** One answer for a missing header, a malformed one and a wrong token: nothing to tell them apart. */
const unauthorized = (): Response => new AdminError(401, { error: "unauthorized" }, { "WWW-Authenticate": 'Bearer realm="sitemap-admin"' }).getResponse();

const bearer = bearerAuth<AppEnv>({
  verifyToken: (given, c) => tokensEqual(given, adminToken(c.env) ?? ""),
  noAuthenticationHeader: { message: unauthorized },
  invalidAuthenticationHeader: { message: unauthorized },
  invalidToken: { message: unauthorized },
});

export const adminAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (adminToken(c.env) === null) return c.notFound();
  return bearer(c, next);
};
