/**
 * break51b, issue 51 Deliver 2: "every documented limit a test can hit is enforced where we test".
 * Each call goes through the Worker's metered env (src/jobs/metered-env.ts) under the enforcing
 * meter, on the real local bindings. A call production refuses must be refused here, by our meter or
 * by the local runtime itself; nothing of a refused call may reach the binding.
 *
 * Pages read 2026-11-28:
 * - D1 "Limits" (https://developers.cloudflare.com/d1/platform/limits/): "Maximum string, BLOB or
 *   table row size: 2,000,000 bytes". D1's client binds a JavaScript Array of numbers as a BLOB
 *   (shown below: `typeof(?1)` is 'blob', `length(?1)` its element count).
 * - Queues "Limits" (https://developers.cloudflare.com/queues/platform/limits/): "Message size
 *   128 KB", footnote: "1 KB is measured as 1000 bytes. Messages can include up to ~100 bytes of
 *   internal metadata that counts towards total message limits." The local broker counts the body
 *   alone; the stricter reading leaves a body 128,000 - 100 bytes (and a batch 256,000 - 100 per message).
 * - KV "Limits" / "Read key-value pairs" (bulk get: at most 100 keys), "List keys" (limit ≤ 1,000),
 *   key (and prefix) ≤ 512 bytes, expirationTtl ≥ 60 s; Queues delaySeconds ≤ 24 h (86,400 s).
 */
import { env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Meter, metered } from "../../src/jobs/meter.ts";
import { meteredEnv } from "../../src/jobs/metered-env.ts";

/** What became of one call: "sent" or "refused: <error>". */
const outcome = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => "sent",
    (err: unknown) => `refused: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`,
  );

/** One call as one invocation of its own, under the enforcing meter. */
const once = (call: (e: Env) => Promise<unknown>): Promise<string> => metered(new Meter(), () => outcome(call(meteredEnv(baseEnv as Env))));

/** Far in the future: no message of this file reaches the consumer while it runs. */
const LATER = 12 * 3_600;

describe("D1: a BLOB bound as an Array of numbers", () => {
  it("binds as a BLOB of one byte per element (what D1 stores)", async () => {
    const row = await metered(new Meter(), () =>
      meteredEnv(baseEnv as Env)
        .DB.prepare("SELECT typeof(?1) AS t, length(?1) AS n")
        .bind([1, 2, 3])
        .first<{ t: string; n: number }>(),
    );
    expect(row).toEqual({ t: "blob", n: 3 });
  });

  // FAILED: src/jobs/metered-env.ts `d1Refusal` and `boundBytes` size strings (UTF-8) and
  // ArrayBuffer/views only (`byteSize`); an Array counts 0 bytes. A 2,000,001-byte BLOB, and a row of
  // two 1,500,000-byte BLOBs, go through the enforcing meter; the local D1 takes them (it enforces no
  // size, platform.md); production answers SQLITE_TOOBIG.
  it("refuses a 2,000,001-byte BLOB given as an Array, and a row of two 1,500,000-byte ones, as it refuses the same bytes as a Uint8Array", async () => {
    await baseEnv.DB.prepare("CREATE TABLE IF NOT EXISTS break51b_blobs (a BLOB, b BLOB)").run();
    const bytes = (n: number) => Array.from({ length: n }, () => 7);
    const asView = await once((e) => e.DB.prepare("SELECT length(?1) AS n").bind(new Uint8Array(2_000_001)).first("n"));
    const asArray = await once((e) => e.DB.prepare("SELECT length(?1) AS n").bind(bytes(2_000_001)).first("n"));
    const half = bytes(1_500_000);
    const row = await once((e) => e.DB.prepare("INSERT INTO break51b_blobs (a, b) VALUES (?1, ?2)").bind(half, half).run());
    expect(asView).toMatch(/^refused: CallLimitError/);
    expect({ asArray, row }).toEqual({ asArray: expect.stringMatching(/^refused/), row: expect.stringMatching(/^refused/) });
    expect(await baseEnv.DB.prepare("SELECT COUNT(*) AS n FROM break51b_blobs").first("n")).toBe(0);
  });
});

describe("Queues: a message's ~100 bytes of metadata count towards its limits", () => {
  // FAILED: CALL_LIMITS.queueMessageBytes is 128,000 for the body alone (src/jobs/metered-env.ts
  // `queueRefusal`): a 127,950-byte body (JSON as sent) is sent, though with its metadata it passes
  // 128 KB; the same for a batch of two such messages against 256 KB.
  it("refuses a body of 127,950 bytes as sent, and a batch of two of them", async () => {
    const body = "x".repeat(127_948); // 127,950 bytes as JSON (the quotes)
    expect(new TextEncoder().encode(JSON.stringify(body)).byteLength).toBe(127_950);
    const one = await once((e) => e.JOBS.send(body, { delaySeconds: LATER }));
    const batch = await once((e) =>
      e.JOBS.sendBatch([
        { body: "y".repeat(127_948), delaySeconds: LATER },
        { body: "z".repeat(127_948), delaySeconds: LATER },
      ]),
    );
    expect({ one, batch }).toEqual({ one: expect.stringMatching(/^refused/), batch: expect.stringMatching(/^refused/) });
  });
});

describe("limits the local runtime enforces itself, through the metered env (attacks that held)", () => {
  const keys = (n: number) => Array.from({ length: n }, (_, i) => `break51b/bulk/${i}`);
  it.each<[string, (e: Env) => Promise<unknown>]>([
    ["a KV bulk get of 101 keys", (e) => e.SNAPSHOTS.get(keys(101))],
    ["a KV list of more than 1,000 keys a call", (e) => e.SNAPSHOTS.list({ limit: 1_001 })],
    ["a KV list whose prefix passes 512 bytes", (e) => e.SNAPSHOTS.list({ prefix: "p".repeat(513) })],
    ["a KV value that expires in less than 60 s", (e) => e.SNAPSHOTS.put(`break51b/ttl/${crypto.randomUUID()}`, "v", { expirationTtl: 59 })],
    ["a queue message delayed more than 24 h", (e) => e.JOBS.send({ kind: "none" }, { delaySeconds: 86_401 })],
    ["a queue batch whose message is delayed more than 24 h", (e) => e.JOBS.sendBatch([{ body: { kind: "none" }, delaySeconds: 86_401 }])],
  ])("%s is refused", async (_label, call) => {
    expect(await once(call)).toMatch(/^refused/);
  });

  it("and their limits are taken: a bulk get of 100 keys, a list of 1,000, a value for 60 s, a message delayed 24 h", async () => {
    expect(await once((e) => e.SNAPSHOTS.get(keys(100)))).toBe("sent");
    expect(await once((e) => e.SNAPSHOTS.list({ limit: 1_000, prefix: "break51b/none/" }))).toBe("sent");
    expect(await once((e) => e.SNAPSHOTS.put(`break51b/ttl/${crypto.randomUUID()}`, "v", { expirationTtl: 60 }))).toBe("sent");
    expect(await once((e) => e.JOBS.send({ kind: "none" }, { delaySeconds: 86_400 }))).toBe("sent");
  });
});
