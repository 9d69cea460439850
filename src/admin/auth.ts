/**
 * Admin authentication (docs/dashboard.md "Sign-in"). A request to `/sitemap-admin/…` is signed in
 * by any of:
 * - a Cloudflare Access JWT (`Cf-Access-Jwt-Assertion`), when ACCESS_TEAM_DOMAIN and ACCESS_AUD
 *   are set (src/admin/auth/access.ts);
 * - `Authorization: Bearer <ADMIN_TOKEN>` (hono/bearer-auth), for scripts;
 * - the session cookie the sign-in form sets (src/admin/auth/session.ts), for browsers.
 * Without a token and without Access every admin path is 404 (the API does not exist). Anything
 * else is 401 with no detail: JSON for the API, the sign-in page (no data) for the dashboard.
 */
import type { Context, MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { getCookie } from "hono/cookie";
import { readVariable } from "../config/variable.ts";
import { ACCESS_AUD, ACCESS_TEAM_DOMAIN, ADMIN_TOKEN } from "../config/variables/index.ts";
import type { AppEnv } from "../http/app-env.ts";
import { readCapped } from "../outbound/read-capped.ts";
import { type AccessConfig, verifyAccessJwt } from "./auth/access.ts";
import { DASHBOARD_PATHS } from "./auth/paths.ts";
import { SESSION_COOKIE, clearedSessionCookie, sessionCookie, sessionValue, validSession } from "./auth/session.ts";
import { signInPage } from "./dashboard/sign-in.ts";
import { AdminError } from "./errors.ts";

const encoder = new TextEncoder();
/** The sign-in form's body is a token (≤ a few hundred bytes); more is not a sign-in. */
const MAX_SIGN_IN_BYTES = 4096;

/** The admin token, or null when unset or bad: a bad one keeps the API off (logged once per isolate, and `npm run check-config` names it). */
function adminToken(env: object): string | null {
  try {
    return readVariable(env, ADMIN_TOKEN);
  } catch {
    return null;
  }
}

/** Access sign-in, or null when either variable is unset or bad (only this way of signing in is off). */
function accessConfig(env: object): AccessConfig | null {
  try {
    const issuer = readVariable(env, ACCESS_TEAM_DOMAIN);
    const aud = readVariable(env, ACCESS_AUD);
    return issuer !== null && aud !== null ? { issuer, aud } : null;
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

/** The admin exists: a token or Access is configured. Otherwise every admin path is 404. */
export const adminEnabled = (env: object): boolean => adminToken(env) !== null || accessConfig(env) !== null;

const wantsPage = (c: Context<AppEnv>): boolean => c.req.method === "GET" && DASHBOARD_PATHS.includes(c.req.path);

export const adminAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = adminToken(c.env);
  const access = accessConfig(c.env);
  if (token === null && access === null) return c.notFound();
  const assertion = c.req.header("Cf-Access-Jwt-Assertion");
  if (access && assertion && (await verifyAccessJwt(assertion, access))) return next();
  if (token !== null && c.req.header("Authorization") !== undefined) return bearer(c, next);
  const session = getCookie(c, SESSION_COOKIE);
  if (token !== null && session && (await validSession(session, token, Date.now()))) return next();
  return wantsPage(c) ? signInPage({ tokenForm: token !== null, access: access !== null, refused: false }) : unauthorized();
};

/** POST /sitemap-admin/sign-in (form field `token`): the session cookie and the dashboard, or the form again. */
export const signIn = async (c: Context<AppEnv>): Promise<Response> => {
  const token = adminToken(c.env);
  const access = accessConfig(c.env) !== null;
  if (token === null) return access ? signInPage({ tokenForm: false, access, refused: false }) : c.notFound();
  let given = "";
  if ((c.req.header("Content-Type") ?? "").startsWith("application/x-www-form-urlencoded")) {
    const { text, overCap } = await readCapped(c.req.raw.body, MAX_SIGN_IN_BYTES);
    if (!overCap) given = new URLSearchParams(text).get("token")?.trim() ?? "";
  }
  if (!given || !(await tokensEqual(given, token))) return signInPage({ tokenForm: true, access, refused: true });
  return new Response(null, {
    status: 303,
    headers: { Location: DASHBOARD_PATHS[0]!, "Set-Cookie": sessionCookie(await sessionValue(token, Date.now())), "Cache-Control": "no-store" },
  });
};

/** POST /sitemap-admin/sign-out: the cookie cleared, back to the sign-in page. */
export const signOut = (c: Context<AppEnv>): Response | Promise<Response> => {
  if (!adminEnabled(c.env)) return c.notFound();
  return new Response(null, {
    status: 303,
    headers: { Location: DASHBOARD_PATHS[0]!, "Set-Cookie": clearedSessionCookie(), "Cache-Control": "no-store" },
  });
};
