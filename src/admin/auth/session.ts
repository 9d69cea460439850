/**
 * Browser sessions of the admin (docs/dashboard.md "Sessions"), made by the sign-in form:
 * - the cookie holds a random id (256 bits); the server keeps the session's key (`sessionKey`: an
 *   HMAC of the id under ADMIN_TOKEN) with the site it is for, who signed in and its expiry
 *   (src/admin-state/store.ts), and checks that row on every request: sign-out revokes it at once,
 *   a session of one site is nothing on another, and rotating ADMIN_TOKEN ends every session (the
 *   same cookie then names another key, which no row has);
 * - nothing stored lets a guess of the token be checked: the key mixes the token with the id, 256
 *   random bits that only the cookie holds, so a copy of the table (a D1 backup) confirms no guess.
 *   A tag of the token alone (an HMAC of a fixed label, as sessions kept before migration 0020)
 *   would confirm one at the speed of a hash;
 * - `__Host-` prefix, `Secure; HttpOnly; SameSite=Strict; Path=/`, no `Domain`: never read by scripts,
 *   never sent cross-site, and no other host can set one of that name for this host: a tenant under the
 *   platform's registrable domain could set a `__Secure-` cookie with `Domain=` that browsers send here
 *   first (a longer path first, RFC 6265 5.4) and shadow the admin's. The prefix needs `Path=/`, so the
 *   cookie also goes to the origin server behind the route: it is an opaque id, worth nothing without
 *   this Worker's rows, and the admin reads every cookie of that name (`sessionIds`), not the first;
 * - on a local plain-http host (loopback, or a `.test` name: RFC 6761 keeps it off the internet) and only
 *   there, the cookie is `sitemap_admin_session` without `Secure`: a browser drops a `__Host-` or
 *   `Secure` cookie set over plain http on such a host, and a local sign-in would come back unsigned;
 * - the CSRF token of its dashboard actions is derived from the id (`csrfToken`): it names the
 *   session without giving it away, and needs nothing stored.
 */

export const SESSION_COOKIE = "__Host-sitemap_admin_session";
/** The cookie's name on a local plain-http host (`isLocalPlainHttp`). */
export const LOCAL_SESSION_COOKIE = "sitemap_admin_session";

/** Whether a request's URL is plain http on a loopback or `.test` host: the only place the cookie goes without `Secure`. */
export function isLocalPlainHttp(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol !== "http:") return false;
  return (
    hostname === "localhost" ||
    hostname.endsWith(".localhost") ||
    hostname === "[::1]" ||
    /^127(\.\d{1,3}){3}$/.test(hostname) ||
    hostname.endsWith(".test")
  );
}

/** The session cookie's name for a request's URL. */
const sessionCookieName = (url: string): string => (isLocalPlainHttp(url) ? LOCAL_SESSION_COOKIE : SESSION_COOKIE);
/** A session lasts this long (s), then the sign-in form comes back. */
export const SESSION_SECONDS = 12 * 3600;

const encoder = new TextEncoder();

const base64url = (bytes: ArrayBuffer | Uint8Array): string =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

const hex = (bytes: ArrayBuffer): string => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

/** A new session id: 32 random bytes, base64url (43 characters). */
export const newSessionId = (): string => base64url(crypto.getRandomValues(new Uint8Array(32)));

/** Whether a cookie value has the shape of a session id (anything else is not looked up). */
const isSessionId = (value: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(value);

/**
 * What the server stores for a session id, and finds it by: HMAC-SHA-256 of the id keyed by the
 * admin token, hex. Made under another token, the same id has another key: rotating the token
 * ends every session without anything of the token being stored.
 */
export async function sessionKey(adminToken: string, id: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(adminToken), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return hex(await crypto.subtle.sign("HMAC", key, encoder.encode(`edge-sitemaps admin session v2\n${id}`)));
}

/**
 * The CSRF token of a browser credential (a session id, or the Access JWT a person's browser
 * carries): a hash of it, so the page can carry it without carrying the credential.
 */
export const csrfToken = async (credential: string): Promise<string> =>
  base64url(await crypto.subtle.digest("SHA-256", encoder.encode(`edge-sitemaps csrf v1\n${credential}`)));

const attributes = (url: string): string => `Path=/; HttpOnly; ${isLocalPlainHttp(url) ? "" : "Secure; "}SameSite=Strict`;

/** Cookies of the session's name a request may carry that are looked up: a few tossed ones cannot hide the admin's. */
const MAX_SESSION_COOKIES = 4;

/**
 * The session ids of a Cookie header under the session cookie's name for `url`, in the order sent, at
 * most MAX_SESSION_COOKIES: a cookie another host set for the registrable domain (possible for the
 * local name) comes first, so the one whose session verifies is used, not the first.
 */
export function sessionIds(cookieHeader: string | undefined, url: string): string[] {
  const name = sessionCookieName(url);
  const ids: string[] = [];
  for (const part of (cookieHeader ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    if (isSessionId(value) && !ids.includes(value)) ids.push(value);
    if (ids.length === MAX_SESSION_COOKIES) break;
  }
  return ids;
}

export const sessionCookie = (id: string, url: string): string => `${sessionCookieName(url)}=${id}; Max-Age=${SESSION_SECONDS}; ${attributes(url)}`;
export const clearedSessionCookie = (url: string): string => `${sessionCookieName(url)}=; Max-Age=0; ${attributes(url)}`;
