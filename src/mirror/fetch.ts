/**
 * Fetching one remote sitemap for a mirror: a conditional GET when validators are known, redirects
 * followed only within the same host and never from https down to http (a downgrade would let
 * anyone on the path rewrite what the mirror deletes), everything within one time limit, and the body read as
 * text with gzip undone (by its magic bytes, whatever the name or headers say) and capped in
 * decompressed bytes — never held whole, and a gzip body inflated in small slices (src/mirror/inflate.ts).
 */
import { isOwnLimit } from "../outbound/own-limit.ts";
import { MirrorFailure, shownUrl } from "./failure.ts";
import { CorruptGzip, InflatedTooLarge, inflateCapped } from "./inflate.ts";
import type { Validators } from "./store.ts";

export interface FetchLimits {
  timeoutMs: number;
  maxBytes: number;
}

/** The outbound fetch (the global one; tests pass a fake remote). */
export type Fetcher = (input: string, init: RequestInit) => Promise<Response>;

export type Fetched = { status: 304 } | { status: 200; validators: Validators; text: AsyncIterable<string>; cancel(): Promise<void> };

const MAX_REDIRECTS = 5;

export async function fetchSitemap(
  url: string,
  conditional: Validators | null,
  limits: FetchLimits,
  fetcher: Fetcher = (input, init) => fetch(input, init),
): Promise<Fetched> {
  // A timer of our own, cleared once the document is read or let go: an index of 10,000 sitemaps
  // must not leave 10,000 timers running (workerd allows 10,000 at a time).
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${limits.timeoutMs} ms`, "TimeoutError")), limits.timeoutMs);
  const done = (): void => clearTimeout(timer);
  try {
    return await fetchWithin(url, conditional, limits, fetcher, controller.signal, done);
  } catch (err) {
    done();
    throw err;
  }
}

async function fetchWithin(
  url: string,
  conditional: Validators | null,
  limits: FetchLimits,
  fetcher: Fetcher,
  signal: AbortSignal,
  done: () => void,
): Promise<Fetched> {
  const headers: Record<string, string> = { Accept: "application/xml, text/xml, application/gzip, */*;q=0.5", "User-Agent": "edge-sitemaps-mirror" };
  if (conditional?.etag) headers["If-None-Match"] = conditional.etag;
  if (conditional?.lastModified) headers["If-Modified-Since"] = conditional.lastModified;
  let target = url;
  for (let hop = 0; ; hop++) {
    let response: Response;
    try {
      response = await fetcher(target, { headers, redirect: "manual", signal });
    } catch (err) {
      // The run's budget refused to send it (src/mirror/budget.ts OutOfRequests): no failure of the remote's; the pass stops, its position kept.
      // Nor is the invocation's own limit: the step fails (retried, then dead-lettered), never the mirror's error.
      if ((err instanceof Error && err.name === "OutOfRequests") || isOwnLimit(err)) throw err;
      throw new MirrorFailure(`${shownUrl(target)}: ${timedOut(err, limits) ?? "the request failed (network error)"}`);
    }
    if (response.status >= 300 && response.status < 400 && response.status !== 304) {
      await response.body?.cancel();
      const location = response.headers.get("location");
      const next = location === null ? null : new URL(location, target);
      if (next !== null && new URL(target).protocol === "https:" && next.protocol !== "https:") {
        throw new MirrorFailure(`${shownUrl(target)} answered ${response.status} to ${shownUrl(next.href)}: a redirect from https to http is refused`);
      }
      if (next === null || next.host !== new URL(url).host || hop >= MAX_REDIRECTS) {
        throw new MirrorFailure(
          `${shownUrl(target)} answered ${response.status}: redirects are followed only within the same host, at most ${MAX_REDIRECTS}`,
        );
      }
      target = next.href;
      continue;
    }
    if (response.status === 304 && conditional !== null) {
      await response.body?.cancel();
      done();
      return { status: 304 };
    }
    if (response.status !== 200 || response.body === null) {
      await response.body?.cancel();
      throw new MirrorFailure(`${shownUrl(target)} answered ${response.status}`);
    }
    const body = response.body;
    return {
      status: 200,
      validators: { etag: response.headers.get("etag"), lastModified: response.headers.get("last-modified") },
      text: decodeText(body, target, limits, done),
      cancel: () => {
        done();
        return body.cancel().catch(() => undefined);
      },
    };
  }
}

function timedOut(err: unknown, limits: FetchLimits): string | null {
  const name = (err as { name?: string } | null)?.name;
  return name === "TimeoutError" || name === "AbortError" ? `no complete answer within ${limits.timeoutMs} ms` : null;
}

/** The body's bytes as they arrive; a timeout or a connection cut short is a MirrorFailure. */
async function* arriving(
  raw: ReadableStreamDefaultReader<Uint8Array>,
  first: Uint8Array | undefined,
  url: string,
  limits: FetchLimits,
): AsyncGenerator<Uint8Array> {
  if (first !== undefined) yield first;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await raw.read();
    } catch (err) {
      throw new MirrorFailure(`${shownUrl(url)}: ${timedOut(err, limits) ?? "the answer broke off"}`);
    }
    if (chunk.done) return;
    yield chunk.value;
  }
}

/** Plain bytes, at most `maxBytes`. */
async function* capped(bytes: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of bytes) {
    total += chunk.byteLength;
    if (total > maxBytes) throw new InflatedTooLarge(`more than ${maxBytes} bytes`);
    yield chunk;
  }
}

/**
 * The body as text: gunzipped when it starts with gzip's magic bytes (in small slices, so a gzip
 * bomb is stopped at the cap without being inflated first: src/mirror/inflate.ts), at most
 * `maxBytes` decompressed, UTF-8.
 */
async function* decodeText(body: ReadableStream<Uint8Array>, url: string, limits: FetchLimits, done: () => void): AsyncGenerator<string> {
  const raw = body.getReader();
  let first: Uint8Array | undefined;
  try {
    const head = await raw.read();
    first = head.value;
  } catch (err) {
    done();
    throw new MirrorFailure(`${shownUrl(url)}: ${timedOut(err, limits) ?? "the answer broke off"}`);
  }
  const gzipped = first !== undefined && first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b;
  const input = arriving(raw, first, url, limits);
  const bytes = gzipped ? inflateCapped(input, limits.maxBytes) : capped(input, limits.maxBytes);
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  try {
    for await (const chunk of bytes) {
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch {
        throw new MirrorFailure(`${shownUrl(url)} is not UTF-8`);
      }
      yield text;
    }
    try {
      yield decoder.decode();
    } catch {
      throw new MirrorFailure(`${shownUrl(url)} is not UTF-8`);
    }
  } catch (err) {
    if (err instanceof InflatedTooLarge) {
      throw new MirrorFailure(`${shownUrl(url)} is larger than ${limits.maxBytes} bytes${gzipped ? " decompressed" : ""} (MIRROR_MAX_BYTES)`);
    }
    if (err instanceof CorruptGzip) throw new MirrorFailure(`${shownUrl(url)}: the gzip data is corrupt or cut short`);
    throw err;
  } finally {
    done();
    await raw.cancel().catch(() => undefined);
  }
}
