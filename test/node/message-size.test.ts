/**
 * src/jobs/message-size.ts against the real serializers: `structuredBytes` is never less than what
 * V8's ValueSerializer writes (Node's `v8.serialize`: the same V8 format as Queues' `v8` content
 * type; workerd offers no `serialize`), and close to it for bytes; `messageBytes` measures a body
 * as its content type sends it, JSON when none is given, which holds while wrangler.jsonc's
 * compatibility date turns `queues_json_messages` on.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serialize } from "node:v8";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { messageBytes, structuredBytes } from "../../src/jobs/message-size.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Every kind a queue message may hold (nested, shared, sparse, boxed, typed arrays, non-ASCII text). */
const cloneable = fc.anything({
  maxDepth: 3,
  maxKeys: 8,
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withSparseArray: true,
  withTypedArray: true,
  withNullPrototype: true,
  withUnicodeString: true,
});

describe("structuredBytes", () => {
  it("is never less than V8 writes, for any cloneable value", () => {
    fc.assert(
      fc.property(cloneable, (value) => {
        expect(structuredBytes(value)).toBeGreaterThanOrEqual(serialize(value).byteLength);
      }),
      { numRuns: 2_000 },
    );
  });

  it("counts an integer as V8 may write it: a double, in an object whose fields V8 keeps as doubles", () => {
    // Objects of this shape made with fractions first: V8 keeps the fields as doubles, and writes 1 as one.
    const shaped = [
      { a: 0.5, b: 1.5, c: 2.5 },
      { a: 1, b: 2, c: 3 },
    ];
    expect(structuredBytes(shaped[1])).toBeGreaterThanOrEqual(serialize(shaped[1]).byteLength);
    expect(serialize(shaped[1]).byteLength).toBeGreaterThan(serialize({ z: 1, y: 2, x: 3 }).byteLength);
  });

  it("counts an object met twice, a view's whole buffer and a two-byte string of ASCII characters", () => {
    const shared = { text: "é".repeat(50) };
    const buffer = new ArrayBuffer(10_000);
    // A slice of a two-byte string is two-byte whatever its characters: V8 writes 2 bytes each.
    const sliced = `€${"x".repeat(5_000)}`.slice(1);
    for (const value of [[shared, shared, shared], new Uint8Array(buffer, 0, 10), { a: new Uint8Array(buffer), b: new DataView(buffer) }, sliced]) {
      expect(structuredBytes(value)).toBeGreaterThanOrEqual(serialize(value).byteLength);
    }
    expect(serialize(sliced).byteLength).toBeGreaterThan(10_000);
  });

  it("is within a few bytes of V8 for bytes, and within twice for text", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300_000 }), fc.string({ unit: "grapheme", maxLength: 2_000 }), (n, text) => {
        for (const bytes of [new ArrayBuffer(n), new Uint8Array(n), new Map([["pad", new Uint8Array(n)]])])
          expect(structuredBytes(bytes) - serialize(bytes).byteLength).toBeLessThanOrEqual(32);
        expect(structuredBytes(text)).toBeLessThanOrEqual(2 * serialize(text).byteLength + 8);
      }),
      { numRuns: 50 },
    );
  });
});

describe("messageBytes", () => {
  it("measures each content type as it is sent, JSON when none is given", () => {
    const bytes = new Uint8Array(100_000);
    // JSON: an ArrayBuffer and a Map are `{}`, a Uint8Array an object of its indices.
    expect(messageBytes(new ArrayBuffer(200_000), undefined)).toBe(2);
    expect(messageBytes(new Map([["pad", "x".repeat(200_000)]]), undefined)).toBe(2);
    expect(messageBytes(bytes, undefined)).toBe(Buffer.byteLength(JSON.stringify(bytes)));
    expect(messageBytes({ job: "régénérer" }, "json")).toBe(Buffer.byteLength('{"job":"régénérer"}'));
    expect(messageBytes("réglé", "text")).toBe(7);
    expect(messageBytes(bytes, "bytes")).toBe(100_000);
    expect(messageBytes(bytes, "V8")).toBe(structuredBytes(bytes));
    expect(messageBytes(new ArrayBuffer(200_000), "v8")).toBeGreaterThanOrEqual(200_000);
    // What JSON cannot hold the runtime refuses itself (nothing sent): nothing to measure.
    expect(messageBytes({ n: 1n }, undefined)).toBe(0);
  });

  it("holds its JSON default to the Worker's configuration: queues_json_messages is on (from 2024-03-18) and not turned off", () => {
    const config = unstable_readConfig({ config: join(ROOT, "wrangler.jsonc") });
    expect(config.compatibility_date! >= "2024-03-18").toBe(true);
    expect(config.compatibility_flags).not.toContain("no_queues_json_messages");
  });
});
