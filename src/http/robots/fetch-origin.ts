/**
 * Fetching the site's own robots.txt as a crawler does (RFC 9309 §2.3.1), and sorting the answer
 * into what it means for a crawler:
 * - `file`: a 2xx that is not an HTML page; at most 500 KiB of it is read (the rest is never
 *   downloaded), cut at its last line end when longer;
 * - `absent`: the origin has no file, so everything is allowed: a 4xx (not 429), or an HTML page
 *   (a front end's catch-all answers 200 text/html for any path; parsed as robots.txt it holds no
 *   rule, which is what crawlers make of it too);
 * - `unreachable`: "assume complete disallow" (§2.3.1.4): a 5xx, a 429 (Google treats it as a
 *   5xx), a timeout, a network or read error, a redirect loop, a sixth redirect, or a redirect
 *   without a usable http(s) Location.
 * Redirects are followed by hand, up to five, to any http(s) host (§2.3.1.2), all within one
 * deadline; every request carries the loop header (src/http/robots/loop.ts).
 */
import type { Fetcher } from "../../notify/http.ts";
import { readPrefix } from "../../outbound/read-prefix.ts";
import { ROBOTS_LOOP_HEADER } from "./loop.ts";
import { ROBOTS_READ_LIMIT, cutAtLineEnd } from "./text.ts";

export type OriginRobots =
  | { kind: "file"; body: Uint8Array; truncated: boolean }
  | { kind: "absent"; reason: string }
  | { kind: "unreachable"; reason: string };

/** Crawlers follow at least five consecutive redirects (RFC 9309 §2.3.1.2); we follow exactly five. */
const MAX_REDIRECTS = 5;

/** A URL for a log line: no query or fragment, which might hold a token. */
export function loggable(url: string): string {
  const u = URL.parse(url);
  return u === null ? "(unparseable URL)" : `${u.origin}${u.pathname}`;
}

/** One request of the chain: manual redirects, the loop header, the chain's deadline. */
export function requestOrigin(fetcher: Fetcher, url: string, signal: AbortSignal): Promise<Response> {
  return fetcher(url, { headers: { [ROBOTS_LOOP_HEADER]: "1", Accept: "text/plain" }, redirect: "manual", signal });
}

async function readFile(response: Response): Promise<OriginRobots> {
  if (/^text\/html\b/i.test(response.headers.get("Content-Type") ?? "")) {
    await response.body?.cancel();
    return { kind: "absent", reason: "origin answered an HTML page" };
  }
  const { bytes, overCap } = await readPrefix(response.body, ROBOTS_READ_LIMIT);
  return overCap ? { kind: "file", body: cutAtLineEnd(bytes), truncated: true } : { kind: "file", body: bytes, truncated: false };
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
      const { status } = response;
      if (status >= 300 && status < 400) {
        await response.body?.cancel();
        const location = response.headers.get("Location");
        const next = location === null ? null : URL.parse(location, current);
        if (next === null || !/^https?:$/.test(next.protocol))
          return { kind: "unreachable", reason: `origin answered ${status} without a usable Location` };
        if (redirects === MAX_REDIRECTS) return { kind: "unreachable", reason: `origin redirected more than ${MAX_REDIRECTS} times` };
        if (seen.has(next.href)) return { kind: "unreachable", reason: "origin redirects in a loop" };
        current = next.href;
        continue;
      }
      if (status >= 200 && status < 300) return await readFile(response);
      await response.body?.cancel();
      if (status >= 400 && status < 500 && status !== 429) return { kind: "absent", reason: `origin answered ${status}` };
      return { kind: "unreachable", reason: `origin answered ${status}` };
    }
  } catch (error) {
    const timedOut = error instanceof Error && error.name === "TimeoutError";
    console.warn(`robots.txt: fetching ${loggable(current)} ${timedOut ? "timed out" : `failed: ${String(error)}`}`);
    return { kind: "unreachable", reason: timedOut ? "origin timed out" : "origin fetch failed" };
  }
}
