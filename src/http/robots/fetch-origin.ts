/**
 * Fetching the site's own robots.txt as a crawler does (RFC 9309 §2.3.1), and sorting the answer
 * into what it means for a crawler:
 * - `file`: a 2xx whose body is not an HTML document (src/http/robots/html-page.ts), whatever its
 *   Content-Type; at most 500 KiB of it is read (the rest is never downloaded), cut at its last
 *   line end when longer;
 * - `absent`: the origin has no file, so everything is allowed: a 404 or 410, or an HTML document
 *   (a soft 404: a front end's catch-all page holds no rule for a crawler either);
 * - `error`: a 5xx or a 429, the origin's word for "crawl nothing now" (§2.3.1.4), passed on with
 *   its status and Retry-After;
 * - `unreachable`: the origin's rules cannot be had by us, though a crawler might get them: any
 *   other 4xx (a 401 or 403 is a WAF refusing our fetch, not "no file"), a timeout, a network or
 *   read error, a redirect loop, a sixth redirect, a redirect without a usable http(s) Location;
 * - `loop`: the chain came back into this Worker (src/http/robots/loop.ts), a configuration problem.
 * Redirects are followed by hand, up to five, to any http(s) host (§2.3.1.2), all within one
 * deadline; every request carries the product's User-Agent and the loop header.
 */
import { USER_AGENT } from "../../core/user-agent.ts";
import type { Fetcher } from "../../notify/http.ts";
import { readPrefix } from "../../outbound/read-prefix.ts";
import { isHtmlDocument } from "./html-page.ts";
import { ROBOTS_LOOP_HEADER, isLoopAnswer } from "./loop.ts";
import { retryAfterOf } from "./origin-error.ts";
import { ROBOTS_READ_LIMIT, cutAtLineEnd } from "./text.ts";

export type OriginRobots =
  | { kind: "file"; body: Uint8Array; truncated: boolean }
  | { kind: "absent"; reason: string }
  | { kind: "error"; status: number; retryAfter: string | null; reason: string }
  | { kind: "unreachable"; reason: string }
  | { kind: "loop"; reason: string };

/** Crawlers follow at least five consecutive redirects (RFC 9309 §2.3.1.2); we follow exactly five. */
const MAX_REDIRECTS = 5;

export const LOOP_REASON = "robots.txt loop: the origin fetch came back into this Worker (check ROBOTS_ORIGIN_URL)";

/** A URL for a log line: no query or fragment, which might hold a token. */
export function loggable(url: string): string {
  const u = URL.parse(url);
  return u === null ? "(unparseable URL)" : `${u.origin}${u.pathname}`;
}

/** One request of the chain: manual redirects, our User-Agent, the loop header, the chain's deadline. */
export function requestOrigin(fetcher: Fetcher, url: string, signal: AbortSignal): Promise<Response> {
  const headers = { [ROBOTS_LOOP_HEADER]: "1", Accept: "text/plain", "User-Agent": USER_AGENT };
  return fetcher(url, { headers, redirect: "manual", signal });
}

async function readFile(response: Response): Promise<OriginRobots> {
  const { bytes, overCap } = await readPrefix(response.body, ROBOTS_READ_LIMIT);
  if (isHtmlDocument(bytes)) return { kind: "absent", reason: "origin answered an HTML page" };
  return overCap ? { kind: "file", body: cutAtLineEnd(bytes), truncated: true } : { kind: "file", body: bytes, truncated: false };
}

/** What a final (non-3xx) answer means. */
async function sortAnswer(response: Response): Promise<OriginRobots> {
  const { status } = response;
  if (status >= 200 && status < 300) return await readFile(response);
  await response.body?.cancel();
  const reason = `origin answered ${status}`;
  if (status === 404 || status === 410) return { kind: "absent", reason };
  if ((status >= 500 && status <= 599) || status === 429) return { kind: "error", status, retryAfter: retryAfterOf(response.headers), reason };
  // A 4xx may be for our fetch alone (a WAF refusing an unknown client); a status outside HTTP's is no answer.
  return { kind: "unreachable", reason: status >= 400 && status < 500 ? `${reason} to our fetch` : reason };
}

export async function fetchOriginRobots(url: string, timeoutMs: number, fetcher: Fetcher): Promise<OriginRobots> {
  // One deadline for the whole chain, body included.
  const signal = AbortSignal.timeout(timeoutMs);
  const seen = new Set<string>();
  let current = url;
  try {
    for (let redirects = 0; ; redirects++) {
      seen.add(current);
      const response = await requestOrigin(fetcher, current, signal);
      if (isLoopAnswer(response)) {
        await response.body?.cancel();
        return { kind: "loop", reason: LOOP_REASON };
      }
      const { status } = response;
      if (status < 300 || status >= 400) return await sortAnswer(response);
      await response.body?.cancel();
      const location = response.headers.get("Location");
      const next = location === null ? null : URL.parse(location, current);
      if (next === null || !/^https?:$/.test(next.protocol)) return { kind: "unreachable", reason: `origin answered ${status} without a usable Location` };
      if (redirects === MAX_REDIRECTS) return { kind: "unreachable", reason: `origin redirected more than ${MAX_REDIRECTS} times` };
      if (seen.has(next.href)) return { kind: "unreachable", reason: "origin redirects in a loop" };
      current = next.href;
    }
  } catch (error) {
    const timedOut = error instanceof Error && error.name === "TimeoutError";
    console.warn(`robots.txt: fetching ${loggable(current)} ${timedOut ? "timed out" : `failed: ${String(error)}`}`);
    return { kind: "unreachable", reason: timedOut ? "origin timed out" : "origin fetch failed" };
  }
}
