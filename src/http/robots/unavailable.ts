/**
 * The answer when the origin's rules cannot be had (its robots.txt unreachable and no last good
 * copy): 503, which crawlers read as "disallow everything for now" (RFC 9309 §2.3.1.4), never a
 * 200 that would allow what the origin forbids. Never cached, so the next request tries again.
 */
const RETRY_AFTER_SECONDS = 60;

export function unavailable(reason: string): Response {
  return new Response(`503 Service Unavailable: the site's robots.txt cannot be read right now (${reason}); retry later\n`, {
    status: 503,
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      "Cache-Control": "no-store",
      "Retry-After": String(RETRY_AFTER_SECONDS),
      "X-Robots-Origin": reason,
    },
  });
}
