/**
 * The answer when something of ours fails (configuration, a store, a bug): the origin's own answer,
 * status and body unchanged, as if the Worker were not there, so the Worker never makes robots.txt
 * worse than the origin's own. One request, no redirect followed (a 3xx goes to the crawler with
 * its Location made absolute, and the crawler follows it); the body is read up to 500 KiB and cut
 * at its last line end like any file (crawlers read no more). Never cached. An answer that came
 * back from this Worker (a loop, src/http/robots/loop.ts) is no origin's: 503.
 */
import type { Fetcher } from "../../notify/http.ts";
import { readPrefix } from "../../outbound/read-prefix.ts";
import { LOOP_REASON, loggable, requestOrigin } from "./fetch-origin.ts";
import { isLoopAnswer } from "./loop.ts";
import { ROBOTS_READ_LIMIT, cutAtLineEnd } from "./text.ts";
import { unavailable } from "./unavailable.ts";

/** Statuses whose answer has no body (a Response with one would throw). */
const NULL_BODY = new Set([204, 205, 304]);
// Not its validators: the body may be cut.
const KEPT_HEADERS = ["Content-Type", "Retry-After"];

export async function passThrough(url: string, timeoutMs: number, fetcher: Fetcher): Promise<Response> {
  try {
    const response = await requestOrigin(fetcher, url, AbortSignal.timeout(timeoutMs));
    if (isLoopAnswer(response)) {
      await response.body?.cancel();
      return unavailable(LOOP_REASON);
    }
    const headers = new Headers({ "Cache-Control": "no-store", "X-Robots-Origin": "the origin's answer, passed through" });
    for (const name of KEPT_HEADERS) {
      const value = response.headers.get(name);
      if (value !== null) headers.set(name, value);
    }
    const location = response.headers.get("Location");
    const target = location === null ? null : URL.parse(location, url);
    if (target !== null) headers.set("Location", target.href);
    if (NULL_BODY.has(response.status) || (response.status >= 300 && response.status < 400)) {
      await response.body?.cancel();
      return new Response(null, { status: response.status, headers });
    }
    const { bytes, overCap } = await readPrefix(response.body, ROBOTS_READ_LIMIT);
    return new Response(overCap ? cutAtLineEnd(bytes) : bytes, { status: response.status, headers });
  } catch (error) {
    console.warn(`robots.txt: passing ${loggable(url)} through failed: ${String(error)}`);
    return unavailable("origin unreachable");
  }
}
