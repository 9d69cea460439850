/**
 * The loop guard. Every fetch of an origin's robots.txt carries ROBOTS_LOOP_HEADER; a request that
 * carries it is answered `508 Loop Detected` marked with ROBOTS_LOOP_ANSWER_HEADER, and never
 * fetches anything itself. The fetch that gets the marked answer back (its chain reached this
 * Worker again: ROBOTS_ORIGIN_URL or an origin redirect pointing at a host the Worker serves, a
 * Custom Domain without `ROBOTS_ORIGIN_URL`, `wrangler dev`) sees a configuration problem, not an
 * answer of the origin: the client gets the last good copy or a 503 (src/http/robots/respond.ts),
 * and status shows the loop (src/robots/status.ts) until an origin answers again.
 */
export const ROBOTS_LOOP_HEADER = "X-Edge-Sitemaps-Robots";
const ROBOTS_LOOP_ANSWER_HEADER = "X-Edge-Sitemaps-Robots-Loop";

export function loopAnswer(): Response {
  return new Response("508 Loop Detected: this robots.txt request came from this Worker's own robots.txt fetch\n", {
    status: 508,
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", [ROBOTS_LOOP_ANSWER_HEADER]: "1" },
  });
}

/** Whether `response` is this Worker's own loop answer (the fetch came back into it). */
export function isLoopAnswer(response: Response): boolean {
  return response.headers.has(ROBOTS_LOOP_ANSWER_HEADER);
}
