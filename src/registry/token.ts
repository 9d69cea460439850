/**
 * A registered site's admin token (docs/tenants.md): 32 random bytes, base64url, prefixed `esk_` so
 * that secret scanners (and people) recognise one in a log or a repository. Only its hash is
 * stored (src/registry/store.ts `tokenHash`); the token is shown once, at creation or rotation.
 *
 * The hash is one SHA-256, not a slow password hash (PBKDF2, scrypt, Argon2): those exist to make
 * guessing a low-entropy secret from its hash expensive, and a token of 256 random bits cannot be
 * guessed from its hash whatever the hash costs. A fast hash also lets every request that carries a
 * token be checked by one index lookup.
 */

const PREFIX = "esk_";
const TOKEN_BYTES = 32;

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** A new site token: `esk_` and 43 base64url characters (256 random bits). */
export function newSiteToken(): string {
  return PREFIX + base64url(crypto.getRandomValues(new Uint8Array(TOKEN_BYTES)));
}

/** What the registry keeps of a token: its SHA-256, lowercase hex. */
export async function tokenHash(token: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
