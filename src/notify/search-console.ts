/**
 * Google Search Console API (optional): Google takes no IndexNow and no pings, but accepts an
 * authenticated sitemap submission. With a service account's JSON key (secret
 * GSC_SERVICE_ACCOUNT; the account must be an owner or full user of the property), sign an RS256
 * JWT (hono/jwt), exchange it for an access token (OAuth 2.0 JWT bearer grant, RFC 7523), and
 * `PUT {api}/webmasters/v3/sites/{site}/sitemaps/{feedpath}` when the site changed. Errors are
 * logged and retried with backoff like pings.
 */
import { sign } from "hono/jwt";
import { GSC_SUBMIT_SCOPE, type SearchConsoleConfig, fillTemplate } from "../config/notify.ts";
import { type RunContext, type TargetReport, deferred, pastDeadline } from "./context.ts";
import { type Attempt, attempt, classify, nextAttemptAt, redact } from "./http.ts";
import { indexUrls } from "./index-urls.ts";
import { type Cursor, type TargetState, cursorAfter, due, failed, newState, succeeded } from "./store.ts";

export const GSC_TARGET = "gsc";
/** Lifetime of the signed assertion (Google accepts at most one hour). */
const JWT_LIFETIME_S = 3600;
/**
 * The token endpoint's answer is read and parsed whole up to this size: Google's access tokens
 * may be 2,048 bytes, so a few KiB of JSON is normal and 64 KiB is generous.
 */
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;

/**
 * The key as hono's signer reads it. A service account JSON copied through an environment
 * variable can carry its newlines as the two characters "\\n": those become real line breaks.
 */
const pemOf = (privateKeyPem: string): string => privateKeyPem.replace(/\\n/g, "\n");

/** DER bytes of a PKCS#8 PEM, for WebCrypto's import (hono/jwt imports PEM itself but cannot export a JWK). */
function pemToDer(pem: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(pem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, "").replace(/\s+/g, "")), (c) => c.charCodeAt(0));
}

export interface JwtClaims {
  iss: string;
  scope: string;
  aud: string;
  iat: number;
  exp: number;
}

export function serviceAccountClaims(config: SearchConsoleConfig, nowMs: number, scope: string = GSC_SUBMIT_SCOPE): JwtClaims {
  const iat = Math.floor(nowMs / 1000);
  return { iss: config.clientEmail, scope, aud: config.tokenUrl, iat, exp: iat + JWT_LIFETIME_S };
}

/**
 * A compact RS256 JWS signed by hono/jwt. hono writes a `kid` header only for a JWK carrying one,
 * so with a key id the PEM is turned into that JWK first.
 */
export async function signJwt(claims: JwtClaims, privateKeyPem: string, keyId: string | null): Promise<string> {
  const pem = pemOf(privateKeyPem);
  if (keyId === null || keyId === "") return sign({ ...claims }, pem, "RS256");
  const key = await crypto.subtle.importKey("pkcs8", pemToDer(pem), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, true, ["sign"]);
  const jwk = (await crypto.subtle.exportKey("jwk", key)) as JsonWebKey;
  return sign({ ...claims }, { ...jwk, alg: "RS256", kid: keyId }, "RS256");
}

export type TokenResult = { ok: true; token: string } | { ok: false; answer: Attempt };

/** Exchanges a freshly signed assertion for an access token. */
async function accessToken(ctx: RunContext, config: SearchConsoleConfig, scope: string): Promise<TokenResult> {
  let assertion: string;
  try {
    assertion = await signJwt(serviceAccountClaims(config, ctx.now, scope), config.privateKey, config.privateKeyId);
  } catch (error) {
    // A key WebCrypto cannot import is a configuration error; status 400 classifies it so.
    const body = redact(`cannot sign with GSC_SERVICE_ACCOUNT's private_key: ${String(error)}`, [config.privateKey]);
    return { ok: false, answer: { status: 400, body, text: "", overCap: false, retryAfterMs: null } };
  }
  const body = new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion });
  const answer = await attempt(
    ctx.fetch,
    config.tokenUrl,
    { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: body.toString() },
    ctx.config.timeoutMs,
    ctx.now,
    { maxBytes: MAX_TOKEN_ANSWER_BYTES, secrets: [assertion] },
  );
  if (answer.status !== 200) return { ok: false, answer };
  const bad = (why: string): TokenResult => ({ ok: false, answer: { ...answer, status: 502, body: `token endpoint answered 200 ${why}` } });
  // The answer holds the token: it is parsed from `text`, never quoted in `body`.
  if (answer.overCap) return bad(`with more than ${MAX_TOKEN_ANSWER_BYTES} bytes`);
  try {
    const json = JSON.parse(answer.text) as { access_token?: unknown };
    if (typeof json.access_token === "string" && json.access_token) return { ok: true, token: json.access_token };
  } catch {
    return bad(`with ${answer.text.length} characters that are not JSON`);
  }
  return bad("without an access_token");
}

function submitUrl(config: SearchConsoleConfig, origin: string, indexUrl: string): string {
  const site = fillTemplate(config.property, origin);
  return `${config.apiBase}/webmasters/v3/sites/${encodeURIComponent(site)}/sitemaps/${encodeURIComponent(indexUrl)}`;
}

const configKey = (c: SearchConsoleConfig): string => `${c.clientEmail} ${c.property} ${c.apiBase}`;

/**
 * Per run: one token of one scope for every site (fetched on first need). Submissions ask for the
 * read-write scope, status reads for the read-only one, so a token leaked from a read cannot
 * change the property.
 */
export class TokenCache {
  readonly #scope: string;
  #pending: Promise<TokenResult> | null = null;
  constructor(scope: string = GSC_SUBMIT_SCOPE) {
    this.#scope = scope;
  }
  get(ctx: RunContext, config: SearchConsoleConfig): Promise<TokenResult> {
    this.#pending ??= accessToken(ctx, config, this.#scope);
    return this.#pending;
  }
}

export async function submitToSearchConsole(
  ctx: RunContext,
  config: SearchConsoleConfig,
  origin: string,
  current: TargetState | undefined,
  newest: Cursor | null,
  tokens: TokenCache,
): Promise<TargetReport> {
  const report: TargetReport = { target: GSC_TARGET, origin, result: "idle", requests: 0, acknowledged: 0 };
  if (!newest || (current && !cursorAfter(newest, current.acked))) return report;
  let state = due(current ?? newState(GSC_TARGET, origin, { stamp: 0, key: 0 }, configKey(config)), configKey(config), ctx.now);
  if (!state) return { ...report, result: "waiting" };

  // Past the step's time budget: the submission waits for the next step (the token's request is one too).
  if (pastDeadline(ctx)) return deferred(report);
  const token = await tokens.get(ctx, config);
  const urls = indexUrls(origin);
  let answer: Attempt = token.ok ? { status: 200, body: "", text: "", overCap: false, retryAfterMs: null } : token.answer;
  if (token.ok) {
    for (const indexUrl of urls) {
      if (pastDeadline(ctx)) return deferred(report);
      const put = { method: "PUT", headers: { Authorization: `Bearer ${token.token}` } };
      answer = await attempt(ctx.fetch, submitUrl(config, origin, indexUrl), put, ctx.config.timeoutMs, ctx.now, { secrets: [token.token] });
      report.requests += 1;
      if (classify(answer.status, false) !== "ok") break;
    }
  }
  report.status = answer.status;
  const kind = classify(answer.status, false);
  if (kind === "ok") {
    state = succeeded(state, ctx.now, answer.status, newest, urls.length);
    await ctx.store.save(state);
    return { ...report, result: "sent", acknowledged: urls.length };
  }
  const failure = kind === "retired" ? "config" : kind;
  state = failed(state, ctx.now, answer.status, answer.body, nextAttemptAt(failure, state.failures + 1, ctx.now, answer.retryAfterMs));
  await ctx.store.save(state);
  const what = `Search Console ${origin}${token.ok ? "" : " (access token)"}: HTTP ${answer.status || "error"} (retry after ${new Date(state.nextAttemptAt).toISOString()})`;
  if (failure === "config") ctx.log.error(`configuration error: ${what}: ${answer.body}`);
  else ctx.log.warn(`${what}: ${answer.body}`);
  return { ...report, result: failure };
}
