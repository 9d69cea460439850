/**
 * The admin session cookie, for browsers signed in with the admin token (no Access): the value is
 * `<expiry seconds>.<HMAC-SHA256 of it>`, keyed by a key derived from ADMIN_TOKEN, so it holds no
 * secret, cannot be forged or extended, and every session ends when the token is rotated.
 * `HttpOnly; Secure; SameSite=Strict; Path=/sitemap-admin/`: never read by scripts, never sent
 * cross-site, never outside the admin API.
 */
import { ADMIN_PATH } from "./paths.ts";

export const SESSION_COOKIE = "sitemap_admin_session";
/** A session lasts this long (s), then the sign-in form comes back. */
export const SESSION_SECONDS = 12 * 3600;

const encoder = new TextEncoder();

/** The signing key: HMAC of a fixed label under the token, so the cookie never signs with the token itself. */
async function sessionKey(adminToken: string): Promise<CryptoKey> {
  const tokenKey = await crypto.subtle.importKey("raw", encoder.encode(adminToken), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const derived = await crypto.subtle.sign("HMAC", tokenKey, encoder.encode("edge-sitemaps admin session v1"));
  return crypto.subtle.importKey("raw", derived, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

const base64url = (bytes: ArrayBuffer): string =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

function fromBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]{43}$/.test(text)) return null;
  return Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));
}

export async function sessionValue(adminToken: string, nowMs: number): Promise<string> {
  const expires = String(Math.floor(nowMs / 1000) + SESSION_SECONDS);
  return `${expires}.${base64url(await crypto.subtle.sign("HMAC", await sessionKey(adminToken), encoder.encode(expires)))}`;
}

/** Whether `value` is a session this token signed that has not expired. Constant time in the signature. */
export async function validSession(value: string, adminToken: string, nowMs: number): Promise<boolean> {
  const m = /^(\d{1,12})\.(.+)$/.exec(value);
  const signature = m ? fromBase64url(m[2]!) : null;
  if (!m || !signature || Number(m[1]) * 1000 <= nowMs) return false;
  return crypto.subtle.verify("HMAC", await sessionKey(adminToken), signature, encoder.encode(m[1]!));
}

const attributes = `Path=${ADMIN_PATH}/; HttpOnly; Secure; SameSite=Strict`;

export const sessionCookie = (value: string): string => `${SESSION_COOKIE}=${value}; Max-Age=${SESSION_SECONDS}; ${attributes}`;
export const clearedSessionCookie = (): string => `${SESSION_COOKIE}=; Max-Age=0; ${attributes}`;
