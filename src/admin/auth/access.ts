/**
 * Cloudflare Access in front of `/sitemap-admin/`: Access adds a `Cf-Access-Jwt-Assertion` RS256
 * JWT to every request it let through. We verify it ourselves (the Worker may also be reachable
 * without Access, e.g. on workers.dev): signature against the team's JWKS
 * (`<issuer>/cdn-cgi/access/certs`), `iss` = the team's issuer, `aud` = the application's tag, and
 * `exp` (required), `nbf` and `iat` against our clock with CLOCK_SKEW_S of allowance either way
 * (Access's clock and the edge's differ by a little).
 *
 * Who it is (docs/dashboard.md "Cloudflare Access"): Access signs two kinds of token with the same
 * keys. A person's carries `email` (and `sub`, their user id); a service token's carries
 * `common_name`, the token's Client ID, with no `email` and an empty `sub`. Only a service token
 * may write; a person's token reads (the browser that carries it also carries it for any script on
 * the site's origin). A token that is neither is refused, and so is a service token whose Client
 * ID is not listed in ACCESS_SERVICE_TOKEN_IDS: the claims say what kind of token Access signed,
 * not that this admin meant to give it writes (any service token the Access policy admits, one
 * made for another application of the team say, would otherwise write).
 *
 * The JWKS is cached per isolate and fetched again only for a `kid` it does not hold (Access
 * rotates keys), at most once per REFETCH_GAP_MS, counted from when a fetch starts; requests that
 * need the keys while a fetch is under way wait for that one (one fetch at a time), so tokens with
 * made-up key ids cost no more than one outbound request per gap. The answer is read up to
 * MAX_JWKS_BYTES.
 */
import { decode, verify } from "hono/jwt";
import { readCapped } from "../../outbound/read-capped.ts";

export interface AccessConfig {
  /** The team's issuer, https://<team>.cloudflareaccess.com (src/config/variables/access.ts). */
  issuer: string;
  aud: string;
  /** The Client IDs of the service tokens that sign in (ACCESS_SERVICE_TOKEN_IDS); any other is no one. */
  serviceTokenIds: ReadonlySet<string>;
}

/** Who a verified Access token names. */
export type AccessIdentity = { kind: "user"; email: string } | { kind: "service"; clientId: string };

type Fetcher = (input: string, init?: RequestInit) => Promise<Response>;

/** A JWKS is a few keys (~2 KiB); 64 KiB is plenty, more is not a JWKS. */
const MAX_JWKS_BYTES = 64 * 1024;
const MAX_KEYS = 32;
const FETCH_TIMEOUT_MS = 5_000;
/** Least time between two fetches of one JWKS (unknown kid, failed fetch), from the start of the last. */
const REFETCH_GAP_MS = 30_000;
/** Clock difference allowed on `exp`, `nbf` and `iat` (s). */
export const CLOCK_SKEW_S = 60;

const certsUrl = (issuer: string): string => `${issuer}/cdn-cgi/access/certs`;

interface CachedJwks {
  keys: Map<string, JsonWebKey>;
  /** When the last fetch started. */
  fetchedAt: number;
  /** The fetch under way, shared by every request that waits for it. */
  inFlight: Promise<Map<string, JsonWebKey>> | null;
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
  let entry = cache.get(url);
  const known = entry?.keys.get(kid);
  if (known) return known;
  if (entry?.inFlight) return (await entry.inFlight).get(kid) ?? null;
  if (entry && now - entry.fetchedAt < REFETCH_GAP_MS) return null;
  if (!entry) cache.set(url, (entry = { keys: new Map(), fetchedAt: now, inFlight: null }));
  const current = entry;
  current.fetchedAt = now;
  // A failed fetch keeps the keys we had, and still counts for the gap.
  current.inFlight = fetchJwks(url, fetcher).then((keys) => {
    if (keys) current.keys = keys;
    current.inFlight = null;
    return current.keys;
  });
  return (await current.inFlight).get(kid) ?? null;
}

const isTime = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);

/** `exp` required and not past, `nbf` and `iat` not ahead, each with CLOCK_SKEW_S of allowance. */
function timely(payload: Record<string, unknown>, nowS: number): boolean {
  const { exp, nbf, iat } = payload;
  if (!isTime(exp) || exp + CLOCK_SKEW_S <= nowS) return false;
  if (nbf !== undefined && (!isTime(nbf) || nbf - CLOCK_SKEW_S > nowS)) return false;
  if (iat !== undefined && (!isTime(iat) || iat - CLOCK_SKEW_S > nowS)) return false;
  return true;
}

/** A person (`email`) or a listed service token (`common_name`, no email, no subject); anything else is no one. */
function identityOf(payload: Record<string, unknown>, serviceTokenIds: ReadonlySet<string>): AccessIdentity | null {
  const { email, common_name: commonName, sub } = payload;
  if (typeof email === "string" && email.length > 0) return { kind: "user", email };
  if (email === undefined && typeof commonName === "string" && serviceTokenIds.has(commonName) && (sub === undefined || sub === "")) {
    return { kind: "service", clientId: commonName };
  }
  return null;
}

/** Who the token names, or null: any failure (bad token, unknown key, JWKS unreachable) is "not signed in". */
export async function verifyAccessJwt(
  token: string,
  config: AccessConfig,
  fetcher: Fetcher = (input, init) => fetch(input, init),
  now = Date.now(),
): Promise<AccessIdentity | null> {
  if (token.length > 16 * 1024) return null;
  try {
    const { header, payload } = decode(token);
    const kid = (header as { kid?: unknown }).kid;
    if (header.alg !== "RS256" || typeof kid !== "string" || !timely(payload, Math.floor(now / 1000))) return null;
    const key = await keyFor(kid, certsUrl(config.issuer), fetcher, now);
    if (!key) return null;
    // Times are checked above, with the allowance hono's own checks do not have.
    const verified = await verify(
      token,
      { ...key, alg: "RS256" },
      { alg: "RS256", iss: config.issuer, aud: config.aud, exp: false, nbf: false, iat: false },
    );
    return identityOf(verified, config.serviceTokenIds);
  } catch {
    return null;
  }
}
