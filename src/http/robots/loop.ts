/**
 * The loop guard: every fetch of an origin's robots.txt carries this header, and a request that
 * carries it is answered 404. A fetch that comes back into this Worker (wrangler dev, a Custom
 * Domain, a misconfigured ROBOTS_ORIGIN_URL) then ends as "no origin file" instead of recursing.
 */
export const ROBOTS_LOOP_HEADER = "X-Edge-Sitemaps-Robots";

export function loopAnswer(): Response {
  return new Response("404 Not Found: robots.txt loop\n", {
    status: 404,
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
  });
}
