/**
 * Admin authentication (docs/dashboard.md "Sign-in"). A request to `/sitemap-admin/…` is signed in
 * by one of (src/admin/auth/principal.ts says what each may do):
 * - `Authorization: Bearer <ADMIN_TOKEN>`, for scripts; when the header is sent, it alone decides;
 * - a Cloudflare Access JWT (`Cf-Access-Jwt-Assertion`), when ACCESS_TEAM_DOMAIN and ACCESS_AUD are
 *   set (src/admin/auth/access.ts): a person's, or a service token's listed in ACCESS_SERVICE_TOKEN_IDS;
 * - the session cookie the sign-in form sets (src/admin/auth/session.ts), checked against its
 *   server-side row on every request.
 * Then src/admin/auth/browser-guard.ts limits what the cookie and a person's JWT may do. Without a
 * token and without Access every admin path is 404 (the API does not exist). Anything else is 401
 * with no detail: JSON for the API, the sign-in page (no data) for the dashboard; a client with
 * too many failed sign-ins gets 429 (src/admin/auth/sign-in-limiter.ts). A sign-in from another
 * site is refused uncounted (`signIn`).
 */
import type { Context, MiddlewareHandler } from "hono";
import { readVariable } from "../config/variable.ts";
import { ACCESS_AUD, ACCESS_SERVICE_TOKEN_IDS, ACCESS_TEAM_DOMAIN, ACCESS_TEST_ISSUER, ADMIN_TOKEN } from "../config/variables/index.ts";
import { loadConfig } from "../config.ts";
import type { AppEnv } from "../http/app-env.ts";
import { readCapped } from "../outbound/read-capped.ts";
import { tokenHash } from "../registry/token.ts";
import { siteRegistry } from "../services.ts";
import { type AccessConfig, verifyAccessJwt } from "./auth/access.ts";
import { browserRefusal, sameOrigin } from "./auth/browser-guard.ts";
import { clientKey } from "./auth/client-address.ts";
import { DASHBOARD_PATHS } from "./auth/paths.ts";
import type { Principal } from "./auth/principal.ts";
import { SESSION_SECONDS, clearedSessionCookie, csrfToken, newSessionId, sessionCookie, sessionIds, sessionKey } from "./auth/session.ts";
import { blockedFor, countFailure, tooManyFailures } from "./auth/sign-in-limiter.ts";
import { signInPage } from "./dashboard/sign-in.ts";
import { AdminError } from "./errors.ts";

const encoder = new TextEncoder();
/** The sign-in form's body is a token (≤ a few hundred bytes); more is not a sign-in. */
const MAX_SIGN_IN_BYTES = 4096;
/** RFC 6750's b64token, as hono/bearer-auth reads it. */
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

/** The admin token, or null when unset or bad: a bad one keeps the API off (logged once per isolate, and `npm run check-config` names it). */
function adminToken(env: object): string | null {
  try {
    return readVariable(env, ADMIN_TOKEN);
  } catch {
    return null;
  }
}

/** Access sign-in, or null when a variable is unset or bad (only this way of signing in is off). */
function accessConfig(env: object): AccessConfig | null {
  try {
    const issuer = readVariable(env, ACCESS_TEST_ISSUER) ?? readVariable(env, ACCESS_TEAM_DOMAIN);
    const aud = readVariable(env, ACCESS_AUD);
    const serviceTokenIds = readVariable(env, ACCESS_SERVICE_TOKEN_IDS) ?? new Set<string>();
    return issuer !== null && aud !== null ? { issuer, aud, serviceTokenIds } : null;
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

/** The admin exists: a token or Access is configured. Otherwise every admin path is 404. */
export const adminEnabled = (env: object): boolean => adminToken(env) !== null || accessConfig(env) !== null;

const wantsPage = (c: Context<AppEnv>): boolean => (c.req.method === "GET" || c.req.method === "HEAD") && DASHBOARD_PATHS.includes(c.req.path);

/** The bearer header's verdict: the principal, or 401/429 (a failure counts against the client). */
async function bearer(c: Context<AppEnv>, token: string | null): Promise<Principal | Response> {
  if (token === null && siteRegistry(c.env) === null) return unauthorized();
  const wait = await blockedFor(c.env, c.req.raw, c.var.origin);
  if (wait > 0) return tooManyFailures(wait);
  const given = BEARER.exec(c.req.header("Authorization") ?? "")?.[1];
  if (given !== undefined && token !== null && (await tokensEqual(given, token))) return { via: "token", who: "token" };
  if (given !== undefined) {
    const site = await siteToken(c, given);
    if (site) return site;
  }
  const over = await countFailure(c.env, c.req.raw, c.var.origin);
  return over > 0 ? tooManyFailures(over) : unauthorized();
}

/**
 * A registered site's own token (docs/tenants.md): its principal on its own site; 403 when it is
 * another live site's token (a credential, of the wrong site: no failure counted); null when it is
 * no site's token. One indexed read of the registry, so a rotated token stops at once.
 */
async function siteToken(c: Context<AppEnv>, given: string): Promise<Principal | Response | null> {
  const registry = siteRegistry(c.env);
  if (!registry) return null;
  const owner = await registry.byTokenHash(await tokenHash(given));
  if (owner === null) return null;
  // The variables win: a site of SITES is never a registered site's, whatever the registry holds.
  if (owner === c.var.origin && !loadConfig(c.env).sites.has(owner)) return { via: "site-token", who: "site token" };
  // Counted among this host's refusals (src/admin/audit.ts), never naming whose token it is.
  c.set("refusedCredential", "another site's token");
  return new AdminError(403, {
    error: "forbidden",
    message: "this token is another site's: a site token reads and writes its own site only",
  }).getResponse();
}

/**
 * A host of the platform: an origin of SITES, where the platform credential (ADMIN_TOKEN) signs in.
 * A registered site's host is a tenant's: any script on it is the tenant's, so the platform's token
 * is never typed there and no platform session lives there (docs/tenants.md "Sign-in").
 */
export const onPlatformHost = (c: Context<AppEnv>): boolean => loadConfig(c.env).sites.has(c.var.origin);

/**
 * What a session on this host is keyed under: the platform token on a platform host; on a
 * registered site's host, its own token's hash, so rotating that token ends its sessions. null: no
 * session can exist here.
 */
async function sessionSecret(c: Context<AppEnv>, token: string | null): Promise<string | null> {
  if (onPlatformHost(c)) return token;
  // Read from the registry itself (one indexed read, as a bearer token's is), not the isolate's list:
  // a rotated token or a deleted site ends its sessions at once, in every isolate.
  const site = await siteRegistry(c.env)?.get(c.var.origin);
  return site && site.deletedAt === null ? `site ${site.tokenHash}` : null;
}

/** The cookie's live session on this site, or null. */
async function session(c: Context<AppEnv>, token: string | null): Promise<Principal | null> {
  const ids = sessionIds(c.req.header("Cookie"), c.req.url);
  const store = c.var.services.admin;
  if (ids.length === 0 || !store) return null;
  const secret = await sessionSecret(c, token);
  if (secret === null) return null;
  // The one that verifies, not the first: a cookie tossed in ahead of the admin's signs no one out.
  for (const id of ids) {
    // Keyed under the token: a session made under an earlier token is not found.
    const s = await store.session(c.var.origin, await sessionKey(secret, id));
    if (s && s.origin === c.var.origin && s.revokedAt === null && s.expiresAt > Date.now())
      return { via: "session", who: s.identity, csrf: await csrfToken(id) };
  }
  return null;
}

async function authenticate(c: Context<AppEnv>, token: string | null, access: AccessConfig | null): Promise<Principal | Response> {
  if (c.req.header("Authorization") !== undefined) return bearer(c, token);
  const assertion = c.req.header("Cf-Access-Jwt-Assertion");
  const identity = access && assertion ? await verifyAccessJwt(assertion, access) : null;
  if (identity?.kind === "service") return { via: "access-service", who: `service token ${identity.clientId}` };
  if (identity?.kind === "user") return { via: "access-user", who: identity.email, csrf: await csrfToken(assertion!) };
  const signedIn = await session(c, token);
  if (signedIn) return signedIn;
  return wantsPage(c) ? signInPage({ tokenForm: token !== null, access: access !== null, refused: false }) : unauthorized();
}

export const adminAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = adminToken(c.env);
  const access = accessConfig(c.env);
  if (token === null && access === null) return c.notFound();
  const principal = await authenticate(c, token, access);
  if (principal instanceof Response) return principal;
  c.set("principal", principal);
  const refused = await browserRefusal(c, principal);
  if (refused) return refused;
  await next();
};

/**
 * POST /sitemap-admin/sign-in (form field `token`): a new session and the dashboard, or the form again.
 * A sign-in from another site, or without a client address, is refused (403) before its token is
 * looked at, and counts against no one: any page could otherwise spend an admin's failed sign-ins
 * and lock the admin, bearer token included, out of the client's address for a minute. The form is
 * a browser's, and a browser reaches us through Cloudflare's edge, which always names the client.
 */
export const signIn = async (c: Context<AppEnv>): Promise<Response> => {
  const token = adminToken(c.env);
  const access = accessConfig(c.env) !== null;
  if (token === null) return access ? signInPage({ tokenForm: false, access, refused: false }) : c.notFound();
  if (!sameOrigin(c)) return signInPage({ tokenForm: true, access, refused: true, forbidden: "A sign-in from another site is refused." });
  if (clientKey(c.req.raw) === null) {
    return signInPage({ tokenForm: true, access, refused: true, forbidden: "A sign-in without a client address (CF-Connecting-IP) is refused." });
  }
  const wait = await blockedFor(c.env, c.req.raw, c.var.origin);
  if (wait > 0) return signInPage({ tokenForm: true, access, refused: true, retryAfter: wait });
  let given = "";
  if ((c.req.header("Content-Type") ?? "").startsWith("application/x-www-form-urlencoded")) {
    const { text, overCap } = await readCapped(c.req.raw.body, MAX_SIGN_IN_BYTES);
    if (!overCap) given = new URLSearchParams(text).get("token")?.trim() ?? "";
  }
  // A platform host takes the platform token; a registered site's host its own token, never the platform's.
  const platform = onPlatformHost(c);
  const own = given === "" || platform ? null : await siteToken(c, given);
  const accepted = given !== "" && (platform ? await tokensEqual(given, token) : own !== null && !(own instanceof Response));
  if (!accepted) {
    const over = await countFailure(c.env, c.req.raw, c.var.origin);
    return signInPage({ tokenForm: true, access, refused: true, ...(over > 0 ? { retryAfter: over } : {}) });
  }
  const secret = await sessionSecret(c, token);
  const store = c.var.services.admin;
  if (!store || secret === null)
    throw new AdminError(503, { error: "unavailable", message: "browser sessions need the DB (D1) binding; the bearer token still works" });
  const id = newSessionId();
  const key = await sessionKey(secret, id);
  const now = Date.now();
  await store.createSession(key, {
    origin: c.var.origin,
    identity: `${platform ? "token" : "site token"} (session ${key.slice(0, 8)})`,
    createdAt: now,
    expiresAt: now + SESSION_SECONDS * 1000,
    revokedAt: null,
  });
  return new Response(null, {
    status: 303,
    headers: { Location: DASHBOARD_PATHS[0]!, "Set-Cookie": sessionCookie(id, c.req.url), "Cache-Control": "no-store" },
  });
};

/** POST /sitemap-admin/sign-out: the session revoked on the server, the cookie cleared, back to the sign-in page. */
export const signOut = async (c: Context<AppEnv>): Promise<Response> => {
  if (!adminEnabled(c.env)) return c.notFound();
  if (!sameOrigin(c)) return new AdminError(403, { error: "forbidden", message: "cross-site request refused" }).getResponse();
  const store = c.var.services.admin;
  const secret = await sessionSecret(c, adminToken(c.env));
  // Without the secret there is no session to end (none is found under another token either).
  if (store && secret !== null) {
    for (const id of sessionIds(c.req.header("Cookie"), c.req.url)) await store.revokeSession(c.var.origin, await sessionKey(secret, id), Date.now());
  }
  return new Response(null, {
    status: 303,
    headers: { Location: DASHBOARD_PATHS[0]!, "Set-Cookie": clearedSessionCookie(c.req.url), "Cache-Control": "no-store" },
  });
};
