/**
 * The origin's own 5xx or 429 on robots.txt, passed on to the crawler: the same status and the same
 * `Retry-After`, never cached, never replaced by a last good copy. A 5xx robots.txt is the owner's
 * way to stop crawling now (RFC 9309 §2.3.1.4: assume complete disallow; Google does, then falls back
 * to its own cached copy), and a 429 is read the same way; when the origin has spoken, the Worker
 * does not overrule it.
 */

/** Longer than any delay-seconds or HTTP-date: a header beyond it is not a Retry-After. */
const MAX_RETRY_AFTER_LENGTH = 64;

/** The origin's `Retry-After` when it is one (delay-seconds or an HTTP-date, RFC 9110 §10.2.3), else null. */
export function retryAfterOf(headers: Headers): string | null {
  const value = headers.get("Retry-After")?.trim();
  if (!value || value.length > MAX_RETRY_AFTER_LENGTH) return null;
  return /^\d+$/.test(value) || !Number.isNaN(Date.parse(value)) ? value : null;
}

export function originErrorAnswer(status: number, retryAfter: string | null, reason: string): Response {
  const headers = new Headers({ "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", "X-Robots-Origin": reason });
  if (retryAfter !== null) headers.set("Retry-After", retryAfter);
  return new Response(`${status}: the site's origin answered ${status} for robots.txt; retry later\n`, { status, headers });
}
