/**
 * The crawler log's hook on the sitemap routes and robots.txt (docs/crawlers.md): a request whose
 * User-Agent names a crawler of CRAWLER_IP_RANGES has its answer recorded after it is sent —
 * crawler, document, status, bytes as sent, source — through `waitUntil`, so nothing waits on it.
 * Any other request costs one test of its User-Agent. Nothing here can change or fail an answer:
 * every error is logged and dropped.
 */
import type { Context, MiddlewareHandler } from "hono";
import { claimedCrawler, verification } from "../../crawlers/identify.ts";
import { rangeMatcher } from "../../crawlers/range-cache.ts";
import { CrawlerRecorder, type FlushTimer, type ObservedFetch, type SiteLive } from "../../crawlers/recorder.ts";
import { type Meter, currentMeter, inInvocation, metered } from "../../jobs/meter.ts";
import { siteServices } from "../../services.ts";
import type { Services } from "../../services-type.ts";
import type { AppEnv } from "../app-env.ts";
import { waitUntilOf } from "../request-context.ts";
import { PATH_KEPT, documentName, loggedDocument } from "./document-name.ts";
import { locationClaim } from "./location-claim.ts";

/** One per isolate: its coalescing state is what keeps the writes bounded. */
const recorder = new CrawlerRecorder();

/** The crawler names of a configuration, computed once per configuration. */
const namesOf = new WeakMap<object, readonly string[]>();
function crawlerNames(s: Services): readonly string[] {
  let names = namesOf.get(s.config);
  if (!names) namesOf.set(s.config, (names = s.config.crawlers.ranges.map((r) => r.name)));
  return names;
}

/**
 * The answer with its body counted as it goes out (only for crawlers' requests); `onEnd` is called
 * once, with the bytes sent, or null when the transfer did not end (the client went away, the body
 * failed): at once when the length is known without reading, else when the body ends — while the
 * response still streams, so the record is handed to `waitUntil` then, not held open before.
 */
function counted(res: Response, onEnd: (bytes: number | null) => void): Response {
  // Called from the body's flush or cancel, which the runtime runs late and, when the client goes
  // away, from no invocation's context: bound to this request's, so what it records is counted there.
  const ended = inInvocation(onEnd);
  const length = res.headers.get("Content-Length");
  if (!res.body || (length !== null && /^\d+$/.test(length))) {
    ended(res.body ? Number(length) : 0);
    return res;
  }
  let sent = 0;
  let once = false;
  const done = (bytes: number | null) => {
    if (once) return;
    once = true;
    ended(bytes);
  };
  // A native pipe, the transform only adding up chunk sizes: a JS pull per chunk costs tens of ms
  // on a large body (measured: bench/ "crawler log").
  const body = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
      flush() {
        done(sent);
      },
      cancel() {
        done(null);
      },
    }),
  );
  // A gzip body goes out as it is (src/http/cache/serve.ts sets the same).
  const encodeBody = res.headers.has("Content-Encoding") ? "manual" : "automatic";
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers, encodeBody });
}

/** `named`: the document the path's syntax names, for the data point (a made-up path's too: Analytics Engine is sampled and grows nothing of ours). */
async function record(
  s: Services,
  request: Request,
  observed: Omit<ObservedFetch, "verification">,
  named: string | null,
  live: SiteLive,
  timer: FlushTimer | null,
): Promise<void> {
  const log = s.crawlerLog;
  const matcher = s.crawlerRanges ? await rangeMatcher(s.crawlerRanges) : null;
  const fetch: ObservedFetch = { ...observed, verification: verification(request, observed.crawler, matcher) };
  s.crawlerAnalytics?.writeDataPoint({
    // An index is at most 96 bytes (Analytics Engine's limit); an origin is ASCII (punycode).
    indexes: [fetch.origin.slice(0, 96)],
    blobs: [fetch.origin, fetch.crawler, fetch.verification ?? "unverified", named ?? "", fetch.source ?? "", fetch.path],
    doubles: [fetch.status, fetch.bytes ?? -1],
  });
  if (log) await recorder.observe(log, fetch, locationClaim, live, timer);
}

/** `work` as part of the invocation `meter` counts (what a `waitUntil` runs after the response is still its request's), or as it is without one. */
const under = <T>(meter: Meter | undefined, work: () => Promise<T>): Promise<T> => (meter ? metered(meter, work) : work());

/**
 * The counts' timer of this request (CRAWLER_COUNT_FLUSH_SECONDS; null when 0): a wait in its
 * `waitUntil`, then the flush, both under its meter.
 */
function flushTimer(seconds: number, waitUntil: (promise: Promise<unknown>) => void, meter: Meter | undefined): FlushTimer | null {
  if (seconds === 0) return null;
  const delayMs = seconds * 1000;
  return {
    delayMs,
    start: (flush) =>
      waitUntil(
        under(meter, async () => {
          await scheduler.wait(delayMs);
          await flush();
        }).catch((error: unknown) => console.error("crawler log: counts were not written", error)),
      ),
  };
}

/**
 * Where a robots.txt answer came from (src/http/robots/respond.ts says so in `X-Robots-Origin` when it
 * is not the origin's file as fetched): `origin`, `last-good` (the origin failed, its last good copy
 * served) or `fallback` (no file of the origin's: minimal rules with our Sitemap: lines).
 */
function robotsSource(res: Response): string {
  const said = res.headers.get("X-Robots-Origin");
  if (said === null || said.startsWith("origin file cut")) return "origin";
  return said.includes("last good copy") ? "last-good" : "fallback";
}

/** The site's services when `origin` is a configured or registered site; null otherwise (or when the configuration cannot be read). */
async function servicesOf(c: Context<AppEnv>, origin: string): Promise<Services | null> {
  try {
    const s = c.get("services") ?? (await siteServices(c.env, origin, waitUntilOf(c)));
    return s?.config.sites.has(origin) ? s : null;
  } catch {
    return null;
  }
}

export const logCrawlerFetches: MiddlewareHandler<AppEnv> = async (c, next) => {
  const url = new URL(c.req.url);
  const s = url.pathname.startsWith("/sitemap-admin") ? null : await servicesOf(c, url.origin);
  const crawler = s ? claimedCrawler(c.req.header("User-Agent") ?? null, crawlerNames(s)) : null;
  await next();
  if (!s || crawler === null) return;
  try {
    const res = c.res;
    const waitUntil = waitUntilOf(c);
    const request = c.req.raw;
    const env = c.env;
    // Asked at a flush of counts: a stale list of sites is read again first (`fresh`).
    const live: SiteLive = async (origin) => (await siteServices(env, origin, waitUntil, true))?.config.sites.has(origin) ?? false;
    const named = documentName(url.pathname, s.config.notify.indexNow?.key ?? null);
    const observed = {
      origin: url.origin,
      crawler,
      // Decided by the answer as it goes out: what was served names a document (issue 50).
      document: loggedDocument(named, res.status),
      path: url.pathname.slice(0, PATH_KEPT),
      at: Date.now(),
      status: res.status,
      source: url.pathname === "/robots.txt" ? robotsSource(res) : res.headers.get("X-Sitemap-Source"),
    };
    // The timer's wait and flush run after the response: this request's meter is handed to them. The record
    // itself starts from the body's end, which `counted` binds to this request's invocation.
    const timer = flushTimer(s.config.crawlers.countFlushSeconds, waitUntil, currentMeter());
    const response = counted(res, (bytes) =>
      waitUntil(
        record(s, request, { ...observed, bytes }, named, live, timer).catch((error: unknown) =>
          console.error("crawler log: a fetch was not recorded", error),
        ),
      ),
    );
    if (response !== res) {
      c.res = undefined;
      c.res = response;
    }
  } catch (error) {
    console.error("crawler log: a fetch was not recorded", error);
  }
};
