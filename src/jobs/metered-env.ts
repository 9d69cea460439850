/**
 * The env's bindings as production limits them (src/jobs/meter.ts counts; this file wraps): each
 * call counted against the running invocation's meter, and each call checked against the limits the
 * platform puts on one call, failing as production fails it (nothing sent). Wrapped once per env, so
 * the services wired on it stay cached. The limits, Workers Paid, read 2026-11-28 (docs/capacity.md
 * "Limits" cites the pages):
 * - D1 "Limits" (https://developers.cloudflare.com/d1/platform/limits/): 100 bound parameters per
 *   query, 100 KB per SQL statement, "Maximum string, BLOB or table row size": 2,000,000 bytes (a
 *   bound value, UTF-8, and the bound values of one statement together: see `d1Refusal`).
 * - KV "Limits" (https://developers.cloudflare.com/kv/platform/limits/): values 25 MiB, keys 512
 *   bytes, metadata 1,024 bytes (serialized JSON), one write a second to the same key (429 past it).
 * - Queues "Limits" (https://developers.cloudflare.com/queues/platform/limits/): a message 128 KB;
 *   `sendBatch` 100 messages and 256 KB in all, measured as each message is sent (src/jobs/message-size.ts),
 *   each with the ~100 bytes of internal metadata the page says count towards those limits.
 * - Durable Object and Cache API calls are subrequests, and service calls (src/jobs/meter.ts).
 * Where a page says "KB", the stricter reading: 1,000 bytes.
 */

import { QUEUE_LIMITS, messageBytes } from "./message-size.ts";
import { counted, currentMeter } from "./meter.ts";

export const CALL_LIMITS = {
  d1BoundParameters: 100,
  d1StatementBytes: 100_000,
  d1ValueBytes: 2_000_000,
  kvValueBytes: 25 * 1024 * 1024,
  kvKeyBytes: 512,
  kvMetadataBytes: 1_024,
  kvWriteIntervalMs: 1_000,
  ...QUEUE_LIMITS,
} as const;

/** A call the platform refuses by its size or rate (what production answers, nothing sent). */
export class CallLimitError extends Error {
  override readonly name = "CallLimitError";
}

const encoder = new TextEncoder();

/** UTF-8 bytes of `text`, encoding only when its length alone cannot settle `limit`. */
function utf8Over(text: string, limit: number): number | null {
  if (text.length * 3 <= limit) return null;
  const bytes = text.length > limit ? Math.max(text.length, encoder.encode(text).byteLength) : encoder.encode(text).byteLength;
  return bytes > limit ? bytes : null;
}

/** A bound BLOB's bytes: an ArrayBuffer or a view, or an Array of numbers, which D1 binds as a BLOB of one byte an element. */
function byteSize(value: unknown): number | null {
  if (value instanceof ArrayBuffer) return value.byteLength;
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (Array.isArray(value)) return value.length;
  return null;
}

/**
 * Fails `call` as production does when `check` names a limit it passes; an invocation whose meter
 * only counts (INVOCATION_LIMITS=count, a deployment) logs it and lets the platform answer.
 */
function checked<T>(check: () => string | null, call: () => T): T {
  const refused = check();
  if (refused === null) return call();
  if (currentMeter()?.enforce === false) {
    console.warn(JSON.stringify({ event: "sitemap.limit.passed", message: refused }));
    return call();
  }
  return Promise.reject(new CallLimitError(refused)) as T;
}

type AnyFunction = (...args: unknown[]) => unknown;
const has = (value: object, ...names: string[]): boolean => names.every((n) => typeof (value as Record<string, unknown>)[n] === "function");

/** Forwards every property; `wrap` may replace a method by name. */
function forwarding<T extends object>(target: T, wrap: (name: string | symbol, method: AnyFunction) => AnyFunction | null): T {
  return new Proxy(target, {
    get(t, name) {
      const value = Reflect.get(t, name, t) as unknown;
      if (typeof value !== "function") return value;
      const method = (value as AnyFunction).bind(t);
      return wrap(name, method) ?? method;
    },
  });
}

const STATEMENT_RUNS = new Set(["first", "all", "run", "raw"]);

interface Statement {
  original: D1PreparedStatement;
  sql: string;
  params: readonly unknown[];
}

function d1Refusal(s: Statement): string | null {
  const { d1BoundParameters, d1StatementBytes, d1ValueBytes } = CALL_LIMITS;
  if (s.params.length > d1BoundParameters)
    return `D1_ERROR: too many SQL variables: ${s.params.length} bound parameters (the limit is ${d1BoundParameters})`;
  const sql = utf8Over(s.sql, d1StatementBytes);
  if (sql !== null) return `D1_ERROR: statement too long: ${sql} bytes of SQL (the limit is ${d1StatementBytes}): SQLITE_TOOBIG`;
  for (const p of s.params) {
    const bytes = typeof p === "string" ? utf8Over(p, d1ValueBytes) : byteSize(p);
    if (bytes !== null && bytes > d1ValueBytes) return `D1_ERROR: string or blob too big: ${bytes} bytes (the limit is ${d1ValueBytes}): SQLITE_TOOBIG`;
  }
  const together = boundBytes(s.params, d1ValueBytes);
  if (together !== null)
    return `D1_ERROR: string or blob too big: the bound values come to ${together} bytes together (the limit on a string, BLOB or row is ${d1ValueBytes}): SQLITE_TOOBIG`;
  return null;
}

/**
 * The bytes of a statement's bound strings (UTF-8) and BLOBs together, when they pass `limit`. D1
 * limits a row, not only a value, to 2,000,000 bytes ("Maximum string, BLOB or table row size"),
 * and a value built in SQL from several parameters (`?1 || ?2`) passes it as one value would: the
 * meter cannot see the row or the value a statement makes, so it takes the stricter reading, every
 * bound value of the statement in one row. Numbers and nulls are left out (a few bytes each).
 */
function boundBytes(params: readonly unknown[], limit: number): number | null {
  // Three bytes per UTF-16 unit is the most UTF-8 can take: most statements are settled without encoding.
  let most = 0;
  for (const p of params) most += typeof p === "string" ? p.length * 3 : (byteSize(p) ?? 0);
  if (most <= limit) return null;
  let bytes = 0;
  for (const p of params) bytes += typeof p === "string" ? encoder.encode(p).byteLength : (byteSize(p) ?? 0);
  return bytes > limit ? bytes : null;
}

function meteredD1(db: D1Database): D1Database {
  const statements = new WeakMap<object, Statement>();
  const statement = (s: Statement): D1PreparedStatement => {
    const wrapped = forwarding(s.original, (name, method) => {
      if (name === "bind") return (...args) => statement({ original: method(...args) as D1PreparedStatement, sql: s.sql, params: args });
      if (typeof name === "string" && STATEMENT_RUNS.has(name))
        return (...args) =>
          checked(
            () => d1Refusal(s),
            () => counted("d1Queries", 1, () => method(...args)),
          );
      return null;
    });
    statements.set(wrapped, s);
    return wrapped;
  };
  const wrapDb = (inner: D1Database): D1Database =>
    forwarding(inner, (name, method) => {
      if (name === "prepare") return (sql) => statement({ original: method(sql) as D1PreparedStatement, sql: String(sql), params: [] });
      // Counted per statement: the limits page does not say a batch is one query, so the stricter reading.
      if (name === "batch") {
        return (list) => {
          const known = (list as D1PreparedStatement[]).map((s) => statements.get(s));
          const refusal = () => known.reduce<string | null>((r, s) => r ?? (s ? d1Refusal(s) : null), null);
          return checked(refusal, () =>
            counted("d1Queries", known.length, () => method((list as D1PreparedStatement[]).map((s, i) => known[i]?.original ?? s))),
          );
        };
      }
      if (name === "exec")
        return (sql) =>
          checked(
            () => d1Refusal({ original: null as never, sql: String(sql), params: [] }),
            () => counted("d1Queries", 1, () => method(sql)),
          );
      if (name === "dump") return (...args) => counted("d1Queries", 1, () => method(...args));
      if (name === "withSession") return (...args) => wrapDb(method(...args) as D1Database);
      return null;
    });
  return wrapDb(db);
}

function kvKeyRefusal(keys: unknown): string | null {
  for (const key of Array.isArray(keys) ? keys : [keys]) {
    const bytes = typeof key === "string" ? utf8Over(key, CALL_LIMITS.kvKeyBytes) : null;
    if (bytes !== null) return `KV failed: 414 UTF-8 encoded length of ${bytes} exceeds key length limit of ${CALL_LIMITS.kvKeyBytes}`;
  }
  return null;
}

function kvPutRefusal(key: unknown, value: unknown, options: unknown): string | null {
  const keyRefused = kvKeyRefusal(key);
  if (keyRefused) return keyRefused.replace("KV failed", "KV PUT failed");
  const size = typeof value === "string" ? utf8Over(value, CALL_LIMITS.kvValueBytes) : byteSize(value);
  if (size !== null && size > CALL_LIMITS.kvValueBytes) return `KV PUT failed: 413 Value length of ${size} exceeds limit of ${CALL_LIMITS.kvValueBytes}`;
  const metadata = (options as { metadata?: unknown } | undefined)?.metadata;
  if (metadata !== undefined && metadata !== null) {
    const bytes = encoder.encode(JSON.stringify(metadata)).byteLength;
    if (bytes > CALL_LIMITS.kvMetadataBytes) return `KV PUT failed: 413 Metadata length of ${bytes} exceeds limit of ${CALL_LIMITS.kvMetadataBytes}`;
  }
  return null;
}

/** A streamed value fails once it passes the value limit (its size is known only as it is read). */
function cappedValue(value: ReadableStream): ReadableStream {
  let bytes = 0;
  return value.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        if (bytes > CALL_LIMITS.kvValueBytes)
          controller.error(new CallLimitError(`KV PUT failed: 413 Value length exceeds limit of ${CALL_LIMITS.kvValueBytes}`));
        else controller.enqueue(chunk);
      },
    }),
  );
}

/** How many keys' last writes a namespace keeps: far more than one second of writes by the invocations of an isolate. */
const RATE_KEYS = 10_000;

/**
 * When each key of a namespace was last written in this isolate, kept per namespace binding, so
 * that every env wrapping it (each request's, the KV writer object's) shares it: the platform's
 * one write a second is per key, whoever writes. In order of writing (a key written again moves to
 * the end), so what is older than a second is pruned from the front, and never more than `RATE_KEYS`.
 */
const lastWrites = new WeakMap<object, Map<string, number>>();

interface WriteRate {
  /** The 429 production answers when `key` was written less than a second before `now`. */
  refusal(key: string, now: number): string | null;
  /** Notes a write the platform accepted (every check passed, the call made). */
  wrote(key: string, now: number): void;
}

function writeRate(namespace: object): WriteRate {
  let written = lastWrites.get(namespace);
  if (!written) lastWrites.set(namespace, (written = new Map()));
  const recent = (at: number, now: number): boolean => now >= at && now - at < CALL_LIMITS.kvWriteIntervalMs;
  return {
    refusal(key, now) {
      const last = written.get(key);
      if (last === undefined || !recent(last, now)) return null;
      return `KV PUT failed: 429 Too Many Requests: the key was written ${now - last} ms ago (one write a second per key)`;
    },
    wrote(key, now) {
      written.delete(key);
      for (const [k, at] of written) {
        if (recent(at, now) && written.size < RATE_KEYS) break;
        written.delete(k);
      }
      written.set(key, now);
    },
  };
}

function meteredKv(kv: KVNamespace): KVNamespace {
  const rate = writeRate(kv);
  // A write holds its key's second only once it is sent: one refused by a check or by the
  // invocation's budget never reached KV, so the next write of the key is the first KV sees.
  const write = (key: unknown, refusal: () => string | null, send: () => unknown) => {
    const now = Date.now();
    return checked(
      () => refusal() ?? rate.refusal(String(key), now),
      () =>
        counted("kvOperations", 1, () => {
          rate.wrote(String(key), now);
          return send();
        }),
    );
  };
  return forwarding(kv, (name, method) => {
    if (name === "put")
      return (key, value, options) =>
        write(
          key,
          () => kvPutRefusal(key, value, options),
          () => method(key, value instanceof ReadableStream ? cappedValue(value) : value, options),
        );
    if (name === "delete")
      return (key) =>
        write(
          key,
          () => kvKeyRefusal(key),
          () => method(key),
        );
    if (name === "get" || name === "getWithMetadata")
      return (key, ...rest) =>
        checked(
          () => kvKeyRefusal(key),
          () => counted("kvOperations", 1, () => method(key, ...rest)),
        );
    if (name === "list") return (...args) => counted("kvOperations", 1, () => method(...args));
    return null;
  });
}

/** A message as `send` and `sendBatch` take it: its body and how it is serialized. */
interface QueueMessage {
  body: unknown;
  contentType?: string;
}

function queueRefusal(messages: readonly QueueMessage[], batch: boolean): string | null {
  const { queueMessageBytes, queueMessageMetadataBytes, queueBatchMessages, queueBatchBytes } = CALL_LIMITS;
  if (batch && messages.length > queueBatchMessages)
    return `Queue sendBatch failed: ${messages.length} messages (the limit is ${queueBatchMessages} a batch)`;
  let total = 0;
  for (const { body, contentType } of messages) {
    const bytes = messageBytes(body, contentType) + queueMessageMetadataBytes;
    if (bytes > queueMessageBytes) return `Queue send failed: a message of ${bytes} bytes with its metadata (the limit is ${queueMessageBytes})`;
    total += bytes;
  }
  if (batch && total > queueBatchBytes)
    return `Queue sendBatch failed: ${total} bytes with the messages' metadata (the limit is ${queueBatchBytes} a batch)`;
  return null;
}

function meteredQueue(queue: Queue): Queue {
  return forwarding(queue, (name, method) => {
    if (name === "send")
      return (body, options, ...rest) =>
        checked(
          () => queueRefusal([{ body, contentType: (options as QueueSendOptions | undefined)?.contentType }], false),
          () => counted("queueSends", 1, () => method(body, options, ...rest)),
        );
    if (name === "sendBatch") {
      return (messages, ...rest) => {
        // Read once: an iterator given as the batch would be empty when sent after the check read it.
        const batch = [...(messages as Iterable<QueueMessage>)];
        return checked(
          () => queueRefusal(batch, true),
          () => counted("queueSends", 1, () => method(batch, ...rest)),
        );
      };
    }
    return null;
  });
}

/** A Durable Object namespace whose stubs count each call (RPC or fetch) as a service call. */
function meteredObjects(namespace: DurableObjectNamespace): DurableObjectNamespace {
  // An RPC stub's methods are remote: called as they are (Reflect.apply), never `bind`, which a stub would take for a method name.
  const stub = (s: object): object =>
    new Proxy(s, {
      get(t, name) {
        const value = Reflect.get(t, name) as unknown;
        if (typeof value !== "function" || typeof name !== "string") return value;
        return (...args: unknown[]) => counted("objectCalls", 1, () => Reflect.apply(value, t, args));
      },
    });
  return forwarding(namespace, (name, method) => (name === "get" || name === "getByName" ? (...args) => stub(method(...args) as object) : null));
}

const meteredEnvs = new WeakMap<object, Env>();

/**
 * `env` with every D1 database, KV namespace, queue producer and Durable Object namespace counted
 * against the running invocation's meter and checked against the platform's limits on one call;
 * the same object for the same env, so what is wired on it stays cached.
 */
export function meteredEnv(env: Env): Env {
  const known = meteredEnvs.get(env);
  if (known) return known;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(env as unknown as Record<string, unknown>)) {
    if (typeof value !== "object" || value === null) out[name] = value;
    else if (has(value, "prepare", "batch", "exec")) out[name] = meteredD1(value as D1Database);
    else if (has(value, "get", "put", "list", "getWithMetadata", "delete")) out[name] = meteredKv(value as KVNamespace);
    else if (has(value, "send", "sendBatch")) out[name] = meteredQueue(value as Queue);
    else if (has(value, "idFromName", "get")) out[name] = meteredObjects(value as DurableObjectNamespace);
    else out[name] = value;
  }
  const metered = out as unknown as Env;
  meteredEnvs.set(env, metered);
  meteredEnvs.set(metered, metered);
  return metered;
}

let globalsCounted = false;

/** Counts every outbound `fetch` and Cache API call of an invocation (installed once by the entry). */
export function countGlobalCalls(): void {
  if (globalsCounted) return;
  globalsCounted = true;
  const original = globalThis.fetch;
  globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => counted("fetches", 1, () => original(input, init))) as typeof fetch;
  const cache = Object.getPrototypeOf(caches.default) as Record<string, AnyFunction>;
  for (const name of ["match", "put", "delete"]) {
    const method = cache[name]!;
    cache[name] = function (this: unknown, ...args: unknown[]) {
      return counted("cacheCalls", 1, () => method.apply(this, args));
    };
  }
}
