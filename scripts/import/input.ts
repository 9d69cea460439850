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

export async function openInput(spec: string): Promise<Opened> {
  let raw: AsyncIterable<Uint8Array | string>;
  let size: number | undefined;
  let base: Opened["base"];
  if (isUrl(spec)) {
    let response: Response;
    try {
      response = await fetch(spec, { headers: { "Accept-Encoding": "identity", "User-Agent": "edge-sitemaps-import" } });
    } catch (err) {
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
    bytes = gunzip;
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
