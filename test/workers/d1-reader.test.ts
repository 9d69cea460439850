/**
 * The D1 reader's overlapped paging: the next keyset page is already asked for while the current
 * one is consumed (one page ahead, never more), every record comes once in key order, and a
 * consumer that stops early leaves nothing unhandled behind.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { D1RecordReader } from "../../src/adapters/d1/reader.ts";
import { D1RecordWriter } from "../../src/adapters/d1/writer.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { freshOrigin, validRecords } from "./support.ts";

/** The real binding, with each statement's `all()` observed: started, and optionally failing from the `failFrom`-th on. */
function observedDb(log: { started: number; settled: number }, failFrom = Number.POSITIVE_INFINITY): D1Database {
  return {
    prepare(sql: string) {
      const real = env.DB.prepare(sql);
      return {
        bind: (...values: unknown[]) => {
          const bound = real.bind(...values);
          return {
            async all<T>() {
              log.started++;
              if (log.started >= failFrom) throw new Error("D1 page failed");
              const result = await bound.all<T>();
              log.settled++;
              return result;
            },
          };
        },
      };
    },
  } as unknown as D1Database;
}

async function seeded(count: number): Promise<{ origin: string; firstKey: number; lastKey: number; locs: string[] }> {
  const origin = freshOrigin("reader");
  const records = validRecords({ ...env, SITES: origin } as Env, demoSection(origin, "products", count));
  await new D1RecordWriter(env.DB).upsert(records);
  const keys = await env.DB.prepare("SELECT min(id) AS lo, max(id) AS hi FROM urls WHERE origin = ?1").bind(origin).first<{ lo: number; hi: number }>();
  return { origin, firstKey: keys!.lo, lastKey: keys!.hi, locs: records.map((r) => r.loc) };
}

describe("D1RecordReader.records", () => {
  it("reads the next page while the current one is consumed, one page ahead, every record once in key order", async () => {
    const { origin, firstKey, lastKey, locs: expected } = await seeded(23);
    const log = { started: 0, settled: 0 };
    const reader = new D1RecordReader(observedDb(log), { pageRows: 5 });
    const locs: string[] = [];
    const aheadAtPage: number[] = [];
    for await (const page of reader.recordPages({ origin, section: "products", firstKey, lastKey })) {
      aheadAtPage.push(log.started - aheadAtPage.length);
      for (const record of page) locs.push(record.loc);
    }
    expect(locs).toEqual(expected);
    // Pages of 5, 5, 5, 5, 3: while a full page is consumed its successor has started (2 = this one + the next);
    // the short last page asks for nothing more.
    expect(aheadAtPage).toEqual([2, 2, 2, 2, 1]);
    expect(log.started).toBe(5);
  });

  it("a full page that reaches the range's last key is the last: no empty query after it", async () => {
    const { origin, firstKey, lastKey } = await seeded(10);
    const log = { started: 0, settled: 0 };
    let n = 0;
    for await (const page of new D1RecordReader(observedDb(log), { pageRows: 5 }).recordPages({ origin, section: "products", firstKey, lastKey }))
      n += page.length;
    expect(n).toBe(10);
    expect(log.started).toBe(2);
  });

  it("a full last page short of the range's last key costs one empty query, not more", async () => {
    const { origin, firstKey, lastKey } = await seeded(10);
    const log = { started: 0, settled: 0 };
    let n = 0;
    const range = { origin, section: "products", firstKey, lastKey: lastKey + 1_000 };
    for await (const page of new D1RecordReader(observedDb(log), { pageRows: 5 }).recordPages(range)) n += page.length;
    expect(n).toBe(10);
    expect(log.started).toBe(3);
  });

  it("a consumer that stops early leaves the page ahead handled, even when it fails", async () => {
    const { origin, firstKey, lastKey } = await seeded(12);
    const log = { started: 0, settled: 0 };
    const unhandled: unknown[] = [];
    const onUnhandled = (event: PromiseRejectionEvent) => unhandled.push(event.reason);
    addEventListener("unhandledrejection", onUnhandled);
    try {
      // The second page (the one ahead) fails while the first is consumed; the consumer stops after the first page.
      const reader = new D1RecordReader(observedDb(log, 2), { pageRows: 5 });
      let n = 0;
      for await (const page of reader.recordPages({ origin, section: "products", firstKey, lastKey })) {
        n += page.length;
        break;
      }
      expect(n).toBe(5);
      expect(log.started).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      removeEventListener("unhandledrejection", onUnhandled);
    }
  });

  it("a page that fails reaches a consumer that goes on reading", async () => {
    const { origin, firstKey, lastKey } = await seeded(12);
    const reader = new D1RecordReader(observedDb({ started: 0, settled: 0 }, 2), { pageRows: 5 });
    let n = 0;
    await expect(
      (async () => {
        for await (const page of reader.recordPages({ origin, section: "products", firstKey, lastKey })) n += page.length;
      })(),
    ).rejects.toThrow("D1 page failed");
    expect(n).toBe(5);
  });
});
