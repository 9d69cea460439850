/**
 * A queue message's bytes as Queues sends it, for the 128 KB message and 256 KB batch limits (Queues
 * "Limits", https://developers.cloudflare.com/queues/platform/limits/). The runtime serializes a
 * message by its content type (`send(body, { contentType })`, workerd src/workerd/api/queue.c++):
 * - none given: JSON. The compatibility flag `queues_json_messages` ("Queues bindings serialize
 *   messages to JSON format by default (the previous default was v8 format)") is on from the
 *   compatibility date 2024-03-18; wrangler.jsonc's is later, and sets no `no_queues_json_messages`.
 *   So an ArrayBuffer or a Map sent without a content type goes as `{}`, and a Uint8Array as an
 *   object of its indices, several times its length;
 * - `json`: the same; `text`: the string's UTF-8; `bytes`: the view's bytes;
 * - `v8`: V8's structured serialization (`structuredBytes`, never less than what V8 writes).
 */

/** Queues' limits (src/jobs/metered-env.ts CALL_LIMITS enforces them; src/jobs/scheduler.ts batches by them). */
export const QUEUE_LIMITS = {
  queueMessageBytes: 128_000,
  /** Queues' footnote: "Messages can include up to ~100 bytes of internal metadata that counts towards total message limits." */
  queueMessageMetadataBytes: 100,
  queueBatchMessages: 100,
  queueBatchBytes: 256_000,
} as const;

const encoder = new TextEncoder();

/** What a body of `contentType` takes on the wire; 0 for a body the runtime refuses itself (a TypeError, nothing sent). */
export function messageBytes(body: unknown, contentType: string | undefined): number {
  switch (contentType?.toLowerCase() ?? "json") {
    case "json": {
      const json = jsonOf(body);
      return json === undefined ? 0 : encoder.encode(json).byteLength;
    }
    case "text":
      return typeof body === "string" ? encoder.encode(body).byteLength : 0;
    case "bytes":
      return ArrayBuffer.isView(body) ? body.byteLength : 0;
    case "v8":
      return structuredBytes(body);
    default:
      return 0;
  }
}

/** `body` as JSON; undefined where the runtime's own JSON fails too (a BigInt, a cycle). */
function jsonOf(body: unknown): string | undefined {
  try {
    return JSON.stringify(body) as string | undefined;
  } catch {
    return undefined;
  }
}

/** Bytes of a varint (base-128, V8's lengths and counts). */
const varint = (n: number): number => (n < 2 ** 7 ? 1 : n < 2 ** 14 ? 2 : n < 2 ** 21 ? 3 : n < 2 ** 28 ? 4 : 5);

/**
 * A string: a tag, its length and its characters, one byte each if V8 holds it as one-byte, two if
 * as two-byte (then a padding byte may come first). Which one V8 holds is not visible from
 * JavaScript (a slice of a two-byte string is two-byte, whatever its characters), so two bytes a
 * unit: never less than written, at most twice.
 */
const stringBytes = (s: string): number => 2 + varint(s.length * 2) + s.length * 2;

/**
 * A number: a tag and a double. A small integer is often shorter (a zigzag varint), but not always:
 * an object whose field V8 keeps as a double writes even 1 as a double, and which it keeps depends
 * on the objects of that shape made before.
 */
const NUMBER_BYTES = 9;

/** A BigInt: a tag, a varint of its sign and byte length, its digits in 64-bit words. */
const bigintBytes = (n: bigint): number => {
  const words = Math.ceil((n < 0n ? -n : n).toString(16).length / 16);
  return 1 + varint(words * 16 + 1) + words * 8;
};

/** A property key: an index is written as a number, any other key as a string. */
const keyBytes = (key: string): number => Math.max(9, stringBytes(key));

/** The bound of an object's enumerable own properties: each key and value, and the end tag with their count. */
function propertiesBytes(value: object, keys: readonly string[], seen: Set<object>): number {
  let bytes = 1 + varint(keys.length);
  for (const key of keys) bytes += keyBytes(key) + sized((value as Record<string, unknown>)[key], seen);
  return bytes;
}

/** An ArrayBuffer: a tag, its length (and, if resizable, its maximum: at most 5 bytes), its bytes. */
const bufferBytes = (buffer: ArrayBufferLike): number => 1 + varint(buffer.byteLength) + 5 + buffer.byteLength;

/**
 * Never less than the bytes V8's ValueSerializer (format 15, as Queues uses it) writes for
 * `value`, header included: each kind as V8 writes it (a tag, lengths as varints, then the
 * contents), strings at two bytes a unit (`stringBytes`), a typed array with the whole buffer it
 * views. An object met again is a reference to its first. A value V8 cannot clone (a function, a
 * symbol) counts nothing: the send fails with DataCloneError before anything goes out.
 */
export function structuredBytes(value: unknown): number {
  return 2 + sized(value, new Set());
}

function sized(value: unknown, seen: Set<object>): number {
  switch (typeof value) {
    case "undefined":
    case "boolean":
      return 1;
    case "number":
      return NUMBER_BYTES;
    case "bigint":
      return bigintBytes(value);
    case "string":
      return stringBytes(value);
    case "object":
      if (value === null) return 1;
      if (seen.has(value)) return 6;
      seen.add(value);
      return objectBytes(value, seen);
    default:
      return 0;
  }
}

function objectBytes(value: object, seen: Set<object>): number {
  if (ArrayBuffer.isView(value)) {
    // V8 writes a view's whole buffer (once, then a reference) before the view; a serializer that
    // takes views as host objects (Node's) writes each view's own bytes. Either is counted: the
    // first view of a buffer as the buffer, any other as its own bytes.
    const first = !seen.has(value.buffer);
    seen.add(value.buffer);
    return (first ? bufferBytes(value.buffer) : 6 + value.byteLength) + 2 + 3 * varint(value.buffer.byteLength) + 1;
  }
  if (value instanceof ArrayBuffer) return bufferBytes(value);
  if (value instanceof Date) return 9;
  if (value instanceof RegExp) return 1 + stringBytes(value.source) + 5;
  if (value instanceof Boolean) return 1;
  if (value instanceof Number) return NUMBER_BYTES;
  if (value instanceof BigInt) return bigintBytes(value.valueOf());
  if (value instanceof String) return 1 + stringBytes(value.valueOf());
  if (value instanceof Map) {
    let bytes = 2 + varint(value.size * 2);
    for (const [k, v] of value) bytes += sized(k, seen) + sized(v, seen);
    return bytes;
  }
  if (value instanceof Set) {
    let bytes = 2 + varint(value.size);
    for (const v of value) bytes += sized(v, seen);
    return bytes;
  }
  if (value instanceof Error) {
    // A tag, the kind of error, its message and stack (and cause), an end tag.
    const error = value as Error & { cause?: unknown };
    return 3 + (1 + stringBytes(String(error.message))) + (1 + stringBytes(String(error.stack ?? ""))) + (1 + sized(error.cause, seen));
  }
  if (Array.isArray(value)) {
    // Dense (each element, a hole one byte) or sparse (each present index with its key): the larger.
    const keys = Object.keys(value);
    const holes = value.length - keys.filter((k) => String(Number(k)) === k).length;
    return 1 + varint(value.length) + Math.max(0, holes) + propertiesBytes(value, keys, seen) + varint(value.length);
  }
  return 1 + propertiesBytes(value, Object.keys(value), seen);
}
