/**
 * Outbound requests of the notifier: one place for the timeout, the bounded reading of answers,
 * the redaction of secrets, the classification of answers and the backoff. `fetch` is injected so
 * tests (and the e2e harness) replace only the network.
 */
import { isOwnLimit } from "../outbound/own-limit.ts";
import { readCapped } from "../outbound/read-capped.ts";

export type Fetcher = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface Attempt {
  /** HTTP status; 0 for a network error or timeout. */
  status: number;
  /**
   * For logs and the stored `last_error`: the response body (secrets redacted, cut to
   * MAX_BODY_CHARS), or the network error's message.
   */
  body: string;
  /** The response body as read: at most `maxBytes`, for a caller that parses it (never logged). */
  text: string;
  /** The body had more than `maxBytes` bytes. */
  overCap: boolean;
  /** Retry-After in ms, when the server sent one. */
  retryAfterMs: number | null;
}

/**
 * ok: done. retry: throttled or server/network trouble, try again later (429, 5xx, timeouts).
 * config: the request itself is refused (400, 401, 403, 422, …): a configuration problem that
 * retrying soon cannot fix. retired: the endpoint is gone (404/410; only pings use it).
 */
export type OutcomeKind = "ok" | "retry" | "config" | "retired";

const MAX_BODY_CHARS = 1000;
/** Bytes of an engine's answer read by default: enough for any error message, the rest is cancelled. */
const DEFAULT_MAX_BYTES = 16 * 1024;

/** What looks like a credential in an answer or error message: bearer values, JWTs, Google access tokens, token fields. */
const CREDENTIAL_PATTERNS: readonly RegExp[] = [
  /\bBearer\s+[^\s"',;]+/gi,
  /\beyJ[\w-]+\.[\w-]+\.[\w-]*/g,
  /\bya29\.[\w.-]+/g,
  /("(?:access_token|id_token|refresh_token|assertion|private_key|key)"\s*:\s*")[^"]*"/gi,
];

/**
 * `text` without the given secrets (a token, a key) and without anything that looks like a
 * credential, cut to MAX_BODY_CHARS: fit for a log line and for `last_error`, which status shows.
 * Redacting before cutting, so a cut can never leave the start of a secret behind.
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join("[redacted]");
  for (const pattern of CREDENTIAL_PATTERNS) {
    out = out.replace(pattern, (_match, field?: string) => (typeof field === "string" ? `${field}[redacted]"` : "[redacted]"));
  }
  return out.length > MAX_BODY_CHARS ? `${out.slice(0, MAX_BODY_CHARS)}…` : out;
}

export interface AttemptOptions {
  /** Bytes of the answer read at most (default 16 KiB); the rest is cancelled unread. */
  maxBytes?: number;
  /** Values never to be repeated in `body` (the request's token or key). */
  secrets?: readonly string[];
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** First retry delay after a transient failure; doubles per consecutive failure. */
const RETRY_BASE_MS = 5 * MINUTE;
const RETRY_MAX_MS = 6 * HOUR;
/** First delay after a configuration error; doubles per consecutive failure. */
const CONFIG_BASE_MS = HOUR;
const CONFIG_MAX_MS = 24 * HOUR;

function retryAfter(value: string | null, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** Sends one request with a timeout and reads its answer up to a cap; throws only an invocation limit (every remote failure is an answer). */
export async function attempt(
  fetcher: Fetcher,
  url: string,
  init: RequestInit,
  timeoutMs: number,
  now: number,
  options: AttemptOptions = {},
): Promise<Attempt> {
  const secrets = options.secrets ?? [];
  try {
    const response = await fetcher(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    let text = "";
    let overCap = false;
    try {
      ({ text, overCap } = await readCapped(response.body, options.maxBytes ?? DEFAULT_MAX_BYTES));
    } catch {
      // the status is what matters; a body cut off by the timeout is not
    }
    const body = redact(text, secrets);
    return { status: response.status, body, text, overCap, retryAfterMs: retryAfter(response.headers.get("Retry-After"), now) };
  } catch (error) {
    const name = error instanceof Error ? error.name : "";
    // The invocation's own limit refused the request: no failure of the remote's.
    if (isOwnLimit(error)) throw error;
    const message = name === "TimeoutError" ? `timed out after ${timeoutMs} ms` : error instanceof Error ? error.message : String(error);
    return { status: 0, body: redact(message, secrets), text: "", overCap: false, retryAfterMs: null };
  }
}

export function classify(status: number, retiresOn404: boolean): OutcomeKind {
  if (status >= 200 && status < 300) return "ok";
  if (retiresOn404 && (status === 404 || status === 410)) return "retired";
  if (status === 0 || status === 408 || status === 429 || status >= 500) return "retry";
  return "config";
}

/** When to try again after the n-th consecutive failure (n ≥ 1). */
export function nextAttemptAt(kind: "retry" | "config", failures: number, now: number, retryAfterMs: number | null): number {
  const exp = Math.min(failures - 1, 16);
  const delay = kind === "retry" ? Math.min(RETRY_BASE_MS * 2 ** exp, RETRY_MAX_MS) : Math.min(CONFIG_BASE_MS * 2 ** exp, CONFIG_MAX_MS);
  return now + Math.min(Math.max(delay, retryAfterMs ?? 0), CONFIG_MAX_MS);
}
