/**
 * The limits Cloudflare puts on one call, enforced at the bindings where the local runtime enforces
 * none of them (src/jobs/metered-env.ts): each refused call fails as production fails it, and
 * nothing reaches the binding. Durable Object and Cache API calls are subrequests and service calls,
 * counted against the invocation's one budget of 1,000 with D1 and KV (src/jobs/meter.ts).
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import "../../src/index.ts"; // the entry installs the counting of fetch and the Cache API
import type { SiteOp, SiteWriterRpc } from "../../src/adapters/kv/object-protocol.ts";
import { InvocationLimitError, Meter, PAID_LIMITS, metered } from "../../src/jobs/meter.ts";
import { CALL_LIMITS, CallLimitError, meteredEnv } from "../../src/jobs/metered-env.ts";
import { validRecords } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const e = (): Env => meteredEnv(env as Env);
const unique = (label: string): string => `call-limits/${label}/${crypto.randomUUID()}`;
/** `bytes` UTF-8 bytes in half as many characters (é is two bytes): a limit in bytes, not characters. */
const twoByte = (bytes: number): string => "é".repeat(bytes / 2);

describe("D1, per statement", () => {
  it("refuses a 101st bound parameter, a statement over 100 KB and a value over 2,000,000 bytes (UTF-8); takes each at the limit", async () => {
    const db = e().DB;
    const params = (n: number) => Array.from({ length: n }, (_, i) => i);
    const select = (n: number) =>
      `SELECT ${params(n)
        .map((i) => `?${i + 1}`)
        .join(" + ")} AS n`;
    await expect(
      db
        .prepare(select(100))
        .bind(...params(100))
        .first("n"),
    ).resolves.toBe(4_950);
    await expect(
      db
        .prepare(select(101))
        .bind(...params(101))
        .first("n"),
    ).rejects.toBeInstanceOf(CallLimitError);

    const padded = (bytes: number) => `SELECT 1 AS n /*${"x".repeat(bytes - "SELECT 1 AS n /**/".length)}*/`;
    expect(new TextEncoder().encode(padded(CALL_LIMITS.d1StatementBytes)).byteLength).toBe(100_000);
    await expect(db.prepare(padded(100_000)).first("n")).resolves.toBe(1);
    await expect(db.prepare(padded(100_001)).first("n")).rejects.toThrow(/statement too long/);
    await expect(db.batch([db.prepare("SELECT 1"), db.prepare(padded(100_001))])).rejects.toBeInstanceOf(CallLimitError);

    await expect(db.prepare("SELECT length(CAST(?1 AS BLOB)) AS n").bind(twoByte(2_000_000)).first("n")).resolves.toBe(2_000_000);
    await expect(db.prepare("SELECT length(CAST(?1 AS BLOB)) AS n").bind(twoByte(2_000_002)).first("n")).rejects.toThrow(/string or blob too big/);
    await expect(db.prepare("SELECT length(?1) AS n").bind(new Uint8Array(2_000_001)).first("n")).rejects.toBeInstanceOf(CallLimitError);
  });
});

describe("KV, per operation", () => {
  it("refuses a value over 25 MiB, a key over 512 bytes and metadata over 1,024 bytes; nothing is written", async () => {
    const kv = e().SNAPSHOTS;
    const key = unique("sizes");
    await expect(kv.put(key, new Uint8Array(CALL_LIMITS.kvValueBytes + 1))).rejects.toThrow(/413 Value length/);
    const long = twoByte(514);
    await expect(kv.put(long, "x")).rejects.toThrow(/414/);
    await expect(kv.get(long)).rejects.toBeInstanceOf(CallLimitError);
    // {"note":"…"} is 11 bytes around the note.
    await expect(kv.put(key, "x", { metadata: { note: "m".repeat(1_014) } })).rejects.toThrow(/Metadata length of 1025 exceeds limit of 1024/);
    expect(await env.SNAPSHOTS.get(key)).toBeNull();
    await kv.put(key, "x", { metadata: { note: "m".repeat(1_013) } });
    expect(await env.SNAPSHOTS.get(key)).toBe("x");
  });

  it("takes one write a second per key (a delete is a write): a second within it is 429, another key is not held up", async () => {
    const kv = e().SNAPSHOTS;
    const key = unique("rate");
    await kv.put(key, "first");
    await expect(kv.put(key, "second")).rejects.toThrow(/429 Too Many Requests/);
    await expect(kv.delete(key)).rejects.toThrow(/429/);
    await kv.put(unique("rate-other"), "other");
    expect(await env.SNAPSHOTS.get(key)).toBe("first");
    await new Promise((resolve) => setTimeout(resolve, CALL_LIMITS.kvWriteIntervalMs + 10));
    await kv.put(key, "after a second");
    expect(await env.SNAPSHOTS.get(key)).toBe("after a second");
  });
});

describe("Queues, per send", () => {
  it("refuses a message over 128 KB, a batch of 101 messages and a batch over 256 KB; nothing is sent", async () => {
    const jobs = e().JOBS;
    await expect(jobs.send({ pad: "x".repeat(CALL_LIMITS.queueMessageBytes) })).rejects.toThrow(/Queue send failed/);
    await expect(jobs.sendBatch(Array.from({ length: 101 }, () => ({ body: {} })))).rejects.toThrow(/101 messages/);
    await expect(jobs.sendBatch(Array.from({ length: 3 }, () => ({ body: { pad: "x".repeat(90_000) } })))).rejects.toThrow(/the limit is 256000/);
  });
});

describe("Durable Object and Cache API calls", () => {
  it("are counted as service calls and subrequests, in the budget D1 and KV share: past it the call is refused, nothing sent", async () => {
    const bound = e();
    const origin = `https://${crypto.randomUUID()}.call-limits.test`;
    const meter = new Meter();
    await metered(meter, async () => {
      const writer = bound.KV_WRITERS.get(bound.KV_WRITERS.idFromName(origin)) as unknown as { status(origin: string): Promise<unknown> };
      await writer.status(origin);
      await caches.default.match(`${origin}/a`);
      await caches.default.put(`${origin}/a`, new Response("a", { headers: { "Cache-Control": "max-age=60" } }));
      await bound.SNAPSHOTS.get(unique("shared"));
    });
    expect({ objects: meter.objectCalls, cache: meter.cacheCalls, kv: meter.kvOperations }).toEqual({ objects: 1, cache: 2, kv: 1 });
    expect([meter.serviceCalls, meter.subrequests]).toEqual([4, 4]);

    const small = new Meter({ ...PAID_LIMITS, serviceCalls: 2 });
    await metered(small, async () => {
      await bound.DB.prepare("SELECT 1").first();
      await caches.default.match(`${origin}/b`);
      await expect(caches.default.put(`${origin}/b`, new Response("b", { headers: { "Cache-Control": "max-age=60" } }))).rejects.toBeInstanceOf(
        InvocationLimitError,
      );
      const writer = bound.KV_WRITERS.get(bound.KV_WRITERS.idFromName(origin)) as unknown as { status(origin: string): Promise<unknown> };
      await expect(writer.status(origin)).rejects.toBeInstanceOf(InvocationLimitError);
    });
    expect(await caches.default.match(`${origin}/b`)).toBeUndefined();
    expect(small.serviceCalls).toBe(2);
  });
});

describe("the KV writer object", () => {
  it("runs each call as an invocation of its own: its KV operations count against its own meter, not the caller's", async () => {
    const origin = `https://${crypto.randomUUID()}.call-limits.test`;
    const site = { ...(env as Env), SITES: origin, URL_SOURCE: "kv" } as Env;
    const meters: Meter[] = [];
    const count = Meter.prototype.count;
    vi.spyOn(Meter.prototype, "count").mockImplementation(function (this: Meter, what, n = 1) {
      if (!meters.includes(this)) meters.push(this);
      count.call(this, what, n);
    });
    const writer = env.KV_WRITERS.get(env.KV_WRITERS.idFromName(origin)) as unknown as SiteWriterRpc;
    const op: SiteOp = { kind: "upsert", records: validRecords(site, [{ loc: `${origin}/a` }]) };
    const caller = new Meter();
    const answer = await metered(caller, () => writer.write(origin, op));
    expect(answer.ok || answer.kind === "busy").toBe(true);
    // The object's first call adopts what KV holds of the site: it lists the namespace, on its own meter.
    const own = meters.filter((m) => m !== caller);
    expect(own.length).toBeGreaterThan(0);
    expect(own.some((m) => m.kvOperations > 0)).toBe(true);
    expect(caller.kvOperations).toBe(0);
  });
});
