/**
 * The meter's queue message sizes (src/jobs/message-size.ts through src/jobs/metered-env.ts) held
 * against the real queue: the local broker refuses a message whose serialized bytes (as the runtime
 * sends them, by content type) pass 128,000, as Queues does. Every message is sent twice, once
 * through the enforcing meter and once straight to the binding; the meter must never let through
 * what the queue refuses, and, where it measures exactly (JSON, text, bytes), refuse nothing the
 * queue takes but a body in the last ~100 bytes below the limit: Queues counts that much internal
 * metadata towards it, which the local broker does not. Messages go with a long delay: none reaches
 * the consumer while the file runs.
 */
import { env as baseEnv } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { messageBytes } from "../../src/jobs/message-size.ts";
import { Meter, metered } from "../../src/jobs/meter.ts";
import { CALL_LIMITS, meteredEnv } from "../../src/jobs/metered-env.ts";

const DELAY = { delaySeconds: 12 * 3_600 };

/** `sent`, or the error's name: what became of one send. */
const outcome = (send: () => Promise<unknown>): Promise<string> =>
  send().then(
    () => "sent",
    (err: unknown) => (err instanceof Error ? err.name : String(err)),
  );

/** What the meter answers for a message, and what the queue itself answers. */
async function bothWays(body: unknown, contentType: QueueContentType | undefined): Promise<{ meter: string; queue: string }> {
  const options = contentType === undefined ? DELAY : { ...DELAY, contentType };
  const jobs = meteredEnv(baseEnv as Env).JOBS;
  const meter = await metered(new Meter(), () => outcome(() => jobs.send(body, options)));
  const queue = await outcome(() => (baseEnv as Env).JOBS.send(body, options));
  return { meter, queue };
}

/** A string of about `bytes` UTF-8 bytes of `unit` (1 to 4 bytes a character). */
const text = (unit: string, bytes: number): string => unit.repeat(Math.ceil(bytes / new TextEncoder().encode(unit).byteLength));

describe("queue messages: the meter against the real queue", () => {
  // Without a content type the runtime sends JSON (compatibility flag queues_json_messages): an
  // ArrayBuffer or a Map is `{}`, a Uint8Array an object of its indices. With `v8`, their bytes.
  it.each([
    ["an ArrayBuffer of 200,000 bytes", undefined, "sent", () => new ArrayBuffer(200_000)],
    ["a Map holding 200,000 characters", undefined, "sent", () => new Map([["pad", "x".repeat(200_000)]])],
    ["a Uint8Array of 100,000 bytes", undefined, "CallLimitError", () => new Uint8Array(100_000)],
    ["an ArrayBuffer of 200,000 bytes", "v8", "CallLimitError", () => new ArrayBuffer(200_000)],
    ["a Map holding 200,000 characters", "v8", "CallLimitError", () => new Map([["pad", "x".repeat(200_000)]])],
    ["a Uint8Array of 100,000 bytes", "v8", "sent", () => new Uint8Array(100_000)],
    ["a Uint8Array of 130,000 bytes", "bytes", "CallLimitError", () => new Uint8Array(130_000)],
  ] as const)("%s, content type %s: %s, as the queue answers", async (_, contentType, expected, body) => {
    const { meter, queue } = await bothWays(body(), contentType);
    expect(meter).toBe(expected);
    expect(queue === "sent").toBe(meter === "sent");
  });

  it("never lets through what the queue refuses, and measures JSON, text and bytes exactly, V8's bytes within a few (generated messages near the limit)", async () => {
    const limit = CALL_LIMITS.queueMessageBytes;
    const near = fc.oneof(fc.integer({ min: limit - 3_000, max: limit + 3_000 }), fc.integer({ min: limit - 300, max: limit + 300 }));
    const unit = fc.constantFrom("x", "é", "€", "😀");
    /** A body, its content type, and for V8's bytes how many: the meter's slack is a few bytes there, none where it measures exactly. */
    const message = fc.oneof(
      fc.record({ contentType: fc.constantFrom(undefined, "json" as const), body: fc.tuple(unit, near).map(([u, n]) => ({ text: text(u, n - 11) })) }),
      fc.record({ contentType: fc.constant("text" as const), body: fc.tuple(unit, near).map(([u, n]) => text(u, n)) }),
      fc.record({ contentType: fc.constant("bytes" as const), body: near.map((n) => new Uint8Array(n)) }),
      fc.record({
        contentType: fc.constant("v8" as const),
        body: fc.oneof(
          near.map((n) => new ArrayBuffer(n)),
          near.map((n) => ({ bytes: new Uint8Array(n) })),
        ),
      }),
      fc.record({ contentType: fc.constant("v8" as const), body: fc.tuple(unit, near).map(([u, n]) => new Map([["text", text(u, n / 2)]])) }),
    );
    const binaryBytes = (body: unknown): number | null =>
      body instanceof ArrayBuffer ? body.byteLength : ((body as { bytes?: Uint8Array }).bytes?.byteLength ?? null);
    const seen = { refused: 0, sent: 0 };
    await fc.assert(
      fc.asyncProperty(message, async ({ body, contentType }) => {
        // Measured before the sends: a `bytes` body's buffer may be detached by them.
        const roomForMetadata = messageBytes(body, contentType) + CALL_LIMITS.queueMessageMetadataBytes <= limit;
        const { meter, queue } = await bothWays(body, contentType);
        seen[queue === "sent" ? "sent" : "refused"] += 1;
        if (meter === "sent") expect(queue).toBe("sent");
        const exact = contentType !== "v8" || Math.abs((binaryBytes(body) ?? limit) - limit) > 64;
        if (exact) expect(meter).toBe(queue === "sent" && roomForMetadata ? "sent" : "CallLimitError");
      }),
      { numRuns: 80 },
    );
    // Both sides of the limit were tried.
    expect(seen.refused).toBeGreaterThan(0);
    expect(seen.sent).toBeGreaterThan(0);
  });
});
