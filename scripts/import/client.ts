/**
 * HTTP client for the admin API with retries: network errors, 429 and 5xx are retried with
 * exponential backoff and jitter (or the server's Retry-After), up to `retries` times. Every
 * other answer is returned to the caller as is. Writes are atomic and idempotent on the server,
 * so resending a batch after an unclear failure is always safe.
 */

export interface ClientOptions {
  /** Base URL of the Worker, e.g. http://localhost:8787. */
  url: string;
  token: string;
  retries: number;
  /** First backoff delay; doubles per attempt (±50 % jitter), capped at maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
}

export interface ApiAnswer {
  status: number;
  /** Parsed JSON body, or null when the body was not JSON. */
  json: unknown;
  text: string;
}

export class ClientError extends Error {
  override readonly name = "ClientError";
}

const RETRY_STATUS = (status: number): boolean => status === 429 || (status >= 500 && status !== 501 && status !== 505);

function retryAfterMs(header: string | null, maxMs: number): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Math.min(Number(header.trim()) * 1000, maxMs);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - Date.now()), maxMs);
}

/** Node's fetch says only "fetch failed"; the cause names the real problem (ECONNREFUSED, …). */
function describe(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  return cause ? `${e.message} (${cause})` : e.message;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class AdminClient {
  readonly #options: ClientOptions;
  retried = 0;

  constructor(options: ClientOptions) {
    this.#options = options;
  }

  endpoint(path: string): string {
    return new URL(path, this.#options.url.endsWith("/") ? this.#options.url : `${this.#options.url}/`).href;
  }

  async request(method: string, path: string, body?: string, contentType = "application/x-ndjson"): Promise<ApiAnswer> {
    const { retries, baseDelayMs, maxDelayMs } = this.#options;
    const url = this.endpoint(path);
    for (let attempt = 0; ; attempt++) {
      let reason: string;
      let serverDelay: number | undefined;
      try {
        const headers: Record<string, string> = { Authorization: `Bearer ${this.#options.token}`, Accept: "application/json" };
        if (body !== undefined) headers["Content-Type"] = contentType;
        const init: RequestInit = { method, headers };
        if (body !== undefined) init.body = body;
        const response = await fetch(url, init);
        const text = await response.text();
        if (!RETRY_STATUS(response.status) || attempt >= retries) {
          let json: unknown = null;
          try {
            json = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          return { status: response.status, json, text };
        }
        reason = `HTTP ${response.status}`;
        serverDelay = retryAfterMs(response.headers.get("retry-after"), maxDelayMs);
      } catch (err) {
        if (attempt >= retries) throw new ClientError(`${method} ${url} failed after ${attempt + 1} attempts: ${describe(err)}`);
        reason = describe(err);
      }
      const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
      // The server's Retry-After (a KV site writer that is busy, 503), plus a little jitter so that
      // concurrent importers do not all come back in the same instant; else our own backoff.
      const delayMs =
        serverDelay === undefined ? Math.round(backoff * (0.5 + Math.random() / 2)) : Math.min(maxDelayMs, serverDelay + Math.round(Math.random() * 250));
      this.retried += 1;
      this.#options.onRetry?.({ attempt: attempt + 1, delayMs, reason });
      await sleep(delayMs);
    }
  }
}
