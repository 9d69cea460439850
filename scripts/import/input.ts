/**
 * Opening inputs: local files or http(s) URLs, gzip detected by its magic bytes (not the name),
 * decompressed as a stream. Counts the raw bytes read so progress can show a percentage when the
 * size is known.
 */
import { type Stats, createReadStream, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Readable, pipeline } from "node:stream";
import { fileURLToPath } from "node:url";
import { createGunzip } from "node:zlib";

export class InputError extends Error {
  override readonly name = "InputError";
}

/** The input decompresses to more than allowed; the reader reporting it adds the line it got to. */
export class TooLarge extends InputError {
  readonly file: string;
  readonly detail: string;
  constructor(file: string, detail: string) {
    super(`${file}: ${detail}`);
    this.file = file;
    this.detail = detail;
  }
}

/** What an input may cost, and where it may lead. */
export interface OpenLimits {
  /** Most decompressed bytes of a gzip input (a small .gz can expand to gigabytes). */
  maxDecompressed: number;
  /** When set, the only hosts an http(s) input may be fetched from, redirects included. */
  hosts?: ReadonlySet<string>;
}

/** Default of --max-decompressed: five times the protocol's 50 MB per sitemap file. */
export const DEFAULT_MAX_DECOMPRESSED_MIB = 256;

const MAX_REDIRECTS = 5;

export interface Opened {
  /** What to call it in messages: the path or URL as given. */
  name: string;
  /** Where relative shard locations resolve from. */
  base: { kind: "file"; dir: string } | { kind: "url"; url: URL };
  /** Raw (possibly compressed) size in bytes, when known. */
  size: number | undefined;
  /** Raw bytes read so far. */
  consumed(): number;
  gzip: boolean;
  /** First decompressed bytes (for format sniffing); also the start of `bytes`. */
  head: Uint8Array;
  /** The decompressed content, head included. */
  bytes: AsyncIterable<Uint8Array>;
}

export function isUrl(spec: string): boolean {
  return /^https?:\/\//i.test(spec);
}

async function* counted(source: AsyncIterable<Uint8Array | string>, count: (n: number) => void): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    count(bytes.byteLength);
    yield bytes;
  }
}

/** The first non-empty chunk, and an iterable that replays it before the rest. */
async function peek(source: AsyncIterable<Uint8Array>): Promise<{ head: Uint8Array; all: AsyncIterable<Uint8Array> }> {
  const iterator = source[Symbol.asyncIterator]();
  let head: Uint8Array = new Uint8Array(0);
  let done = false;
  while (head.byteLength === 0) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    head = next.value;
  }
  async function* all(): AsyncGenerator<Uint8Array> {
    if (head.byteLength > 0) yield head;
    if (done) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { head, all: all() };
}

/**
 * Node's fetch says only "fetch failed" when no answer came: an InputError naming the host and the
 * cause (ECONNREFUSED, ENOTFOUND, …) instead.
 */
async function fetchOrSay(spec: string, url: string | URL, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
    const why = typeof cause?.code === "string" ? cause.code : typeof cause?.message === "string" ? cause.message : (err as Error).message;
    throw new InputError(`${spec}: ${new URL(url).host} could not be reached (${why})`);
  }
}

/** GET with redirects followed by hand, each one only to an allowed host (when `hosts` is set). */
async function get(spec: string, hosts: ReadonlySet<string> | undefined): Promise<Response> {
  const headers = { "Accept-Encoding": "identity", "User-Agent": "edge-sitemaps-import" };
  if (hosts === undefined) return fetchOrSay(spec, spec, { headers });
  let url = new URL(spec);
  for (let hop = 0; ; hop++) {
    if (!hosts.has(url.host))
      throw new InputError(`${spec}: ${url.host} is not an allowed host (${[...hosts].join(", ")}); pass --allow-host ${url.host} to follow it`);
    const response = await fetchOrSay(spec, url, { headers, redirect: "manual" });
    const location = response.headers.get("location");
    if (response.status < 300 || response.status > 399 || location === null) return response;
    await response.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new InputError(`${spec}: more than ${MAX_REDIRECTS} redirects`);
    url = new URL(location, url);
  }
}

/** Decompressed bytes, up to `max`. */
async function* capped(bytes: AsyncIterable<Uint8Array>, name: string, max: number): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of bytes) {
    total += chunk.byteLength;
    if (total > max) {
      throw new TooLarge(
        name,
        `decompresses to more than ${Math.round(max / 2 ** 20)} MiB: stopped (a gzip bomb? if the file is genuine, raise --max-decompressed)`,
      );
    }
    yield chunk;
  }
}

export async function openInput(spec: string, limits: OpenLimits): Promise<Opened> {
  let raw: AsyncIterable<Uint8Array | string>;
  let size: number | undefined;
  let base: Opened["base"];
  if (isUrl(spec)) {
    let response: Response;
    try {
      response = await get(spec, limits.hosts);
    } catch (err) {
      if (err instanceof InputError) throw err;
      throw new InputError(`cannot fetch ${spec}: ${(err as Error).message}`);
    }
    if (!response.ok || response.body === null) throw new InputError(`GET ${spec} answered ${response.status} ${response.statusText}`);
    const length = response.headers.get("content-length");
    size = length !== null && response.headers.get("content-encoding") === null ? Number(length) : undefined;
    raw = Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>);
    base = { kind: "url", url: new URL(response.url || spec) };
  } else {
    const path = spec.startsWith("file:") ? fileURLToPath(spec) : spec;
    let stat: Stats;
    try {
      stat = statSync(path);
    } catch (err) {
      throw new InputError(`cannot read ${spec}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message}`);
    }
    if (!stat.isFile()) throw new InputError(`${spec} is not a file`);
    size = stat.size;
    raw = createReadStream(path, { highWaterMark: 256 * 1024 });
    base = { kind: "file", dir: dirname(resolve(path)) };
  }
  let consumed = 0;
  const first = await peek(counted(raw, (n) => (consumed += n)));
  const gzip = first.head[0] === 0x1f && first.head[1] === 0x8b;
  let bytes: AsyncIterable<Uint8Array> = first.all;
  if (gzip) {
    const gunzip = createGunzip();
    pipeline(Readable.from(first.all), gunzip, () => {});
    bytes = capped(gunzip, spec, limits.maxDecompressed);
  }
  const decompressed = await peek(gzipErrors(bytes, spec, gzip));
  return { name: spec, base, size, consumed: () => consumed, gzip, head: decompressed.head, bytes: decompressed.all };
}

async function* gzipErrors(bytes: AsyncIterable<Uint8Array>, name: string, gzip: boolean): AsyncGenerator<Uint8Array> {
  try {
    yield* bytes;
  } catch (err) {
    if (gzip && (err as NodeJS.ErrnoException).code?.startsWith("Z_")) throw new InputError(`${name}: broken gzip data (${(err as Error).message})`);
    throw err;
  }
}
