/**
 * Cloudflare Access in front of `/sitemap-admin/`: Access adds a `Cf-Access-Jwt-Assertion` RS256
 * JWT to every request it let through. We verify it ourselves (the Worker may also be reachable
 * without Access, e.g. on workers.dev): signature against the team's JWKS
 * (`<issuer>/cdn-cgi/access/certs`), `iss` = the team's issuer, `aud` = the application's tag,
 * and an `exp` in the future (hono/jwt's `verify`; we require `exp`, which hono leaves optional).
 *
 * The JWKS is cached per isolate and fetched again only for a `kid` it does not hold (Access
 * rotates keys), at most once per REFETCH_GAP_MS, so tokens with made-up key ids cost no more
 * than one outbound request per gap. The answer is read up to MAX_JWKS_BYTES.
 */
import { decode, verify } from "hono/jwt";
import { readCapped } from "../../outbound/read-capped.ts";

export interface AccessConfig {
  /** The team's issuer, e.g. https://myteam.cloudflareaccess.com (src/config/variables/access.ts). */
  issuer: string;
  aud: string;
}

type Fetcher = (input: string, init?: RequestInit) => Promise<Response>;

/** A JWKS is a few keys (~2 KiB); 64 KiB is plenty, more is not a JWKS. */
const MAX_JWKS_BYTES = 64 * 1024;
const MAX_KEYS = 32;
const FETCH_TIMEOUT_MS = 5_000;
/** Least time between two fetches of one JWKS (unknown kid, failed fetch). */
const REFETCH_GAP_MS = 30_000;

const certsUrl = (issuer: string): string => `${issuer}/cdn-cgi/access/certs`;

interface CachedJwks {
  keys: Map<string, JsonWebKey>;
  fetchedAt: number;
}

const cache = new Map<string, CachedJwks>();

/** Forgets every cached JWKS (tests: a fresh isolate). */
export function clearJwksCache(): void {
  cache.clear();
}

async function fetchJwks(url: string, fetcher: Fetcher): Promise<Map<string, JsonWebKey> | null> {
  try {
    const response = await fetcher(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { Accept: "application/json" } });
    const { text, overCap } = await readCapped(response.body, MAX_JWKS_BYTES);
    if (!response.ok || overCap) return null;
    const json = JSON.parse(text) as { keys?: unknown };
    if (!Array.isArray(json.keys)) return null;
    const keys = new Map<string, JsonWebKey>();
    for (const key of json.keys.slice(0, MAX_KEYS) as (JsonWebKey & { kid?: unknown })[]) {
      if (key && typeof key === "object" && typeof key.kid === "string" && key.kty === "RSA") keys.set(key.kid, key);
    }
    return keys;
  } catch {
    return null;
  }
}

async function keyFor(kid: string, url: string, fetcher: Fetcher, now: number): Promise<JsonWebKey | null> {
  const cached = cache.get(url);
  const known = cached?.keys.get(kid);
  if (known) return known;
  if (cached && now - cached.fetchedAt < REFETCH_GAP_MS) return null;
  const keys = await fetchJwks(url, fetcher);
  // A failed fetch keeps the keys we had, and still counts for the gap.
  cache.set(url, { keys: keys ?? cached?.keys ?? new Map(), fetchedAt: now });
  return keys?.get(kid) ?? null;
}

/** The verified claims, or null: any failure (bad token, unknown key, JWKS unreachable) is "not signed in". */
export async function verifyAccessJwt(
  token: string,
  config: AccessConfig,
  fetcher: Fetcher = (input, init) => fetch(input, init),
  now = Date.now(),
): Promise<Record<string, unknown> | null> {
  if (token.length > 16 * 1024) return null;
  try {
    const { header, payload } = decode(token);
    const kid = (header as { kid?: unknown }).kid;
    if (header.alg !== "RS256" || typeof kid !== "string" || typeof payload.exp !== "number") return null;
    const key = await keyFor(kid, certsUrl(config.issuer), fetcher, now);
    if (!key) return null;
    return await verify(token, { ...key, alg: "RS256" }, { alg: "RS256", iss: config.issuer, aud: config.aud });
  } catch {
    return null;
  }
}
