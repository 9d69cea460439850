/**
 * Guards of a partitioned site's move, each against the defect it closes (issue 49): the flip's
 * "is a sync of this site committing?" is asked of the site's own syncs in SQL, however many other
 * sites have syncs open; the row copy's chunks are measured in UTF-8 bytes, what D1 limits.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { d1RecordStore } from "../../src/adapters/d1/record-store.ts";
import { D1RecordWriter } from "../../src/adapters/d1/writer.ts";
import { utf8Length } from "../../src/core/escape.ts";
import { freshOrigin, validRecords } from "./support.ts";

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

/** D1's limit on one bound value (docs/capacity.md); the copy stays at half of it. */
const D1_MAX_VALUE_BYTES = 2_000_000;

/** `db` as is, recording the UTF-8 size of every string value bound to its statements. */
function recording(db: D1Database): { db: D1Database; bound: number[] } {
  const bound: number[] = [];
  const prepare = (sql: string): D1PreparedStatement => {
    const statement = db.prepare(sql);
    return new Proxy(statement, {
      get(target, key) {
        if (key === "bind")
          return (...values: unknown[]) => {
            for (const v of values) if (typeof v === "string") bound.push(utf8Length(v));
            return target.bind(...values);
          };
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  const wrapped = new Proxy(db, {
    get(target, key) {
      if (key === "prepare") return prepare;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { db: wrapped, bound };
}

describe("the flip's question: is a sync of this site open or committing?", () => {
  it("finds this site's sync with 100 other sites' newer syncs open in the same database", async () => {
    const origin = freshOrigin("guard-sync");
    const sync = d1RecordStore(baseEnv.DB).sync!;
    const now = Date.now();
    const mine = await sync.start({ sites: [origin], section: null, source: null }, { maxDelete: 1, ttlMs: 3_600_000 }, now - 60_000);
    for (let i = 0; i < 100; i++)
      await sync.start({ sites: [freshOrigin("guard-other")], section: null, source: null }, { maxDelete: 1, ttlMs: 3_600_000 }, now - i);
    expect((await sync.active(origin)).map((s) => s.id)).toEqual([mine.id]);
    // A site listed second in a sync's scope is found too; a site of none has none.
    const shared = await sync.start({ sites: [freshOrigin("guard-first"), origin], section: null, source: null }, { maxDelete: 1, ttlMs: 3_600_000 }, now);
    expect((await sync.active(origin)).map((s) => s.id).sort()).toEqual([mine.id, shared.id].sort());
    expect(await sync.active(freshOrigin("guard-none"))).toEqual([]);
  });
});

describe("the row copy between two databases", () => {
  it("sends 500 rows of CJK captions in values under D1's limit, measured in UTF-8 bytes, and loses none", async () => {
    const origin = freshOrigin("guard-cjk");
    const env = { ...baseEnv, SITES: origin } as Env;
    // 1,500 UTF-16 units a row, 3 bytes each in UTF-8: 500 rows are ~0.75M units but ~2.3 MB.
    const caption = (i: number) => "圖片說明文字".repeat(125).slice(0, 750 - String(i).length) + String(i);
    const inputs = Array.from({ length: 500 }, (_, i) => ({
      loc: `${origin}/p/${i}`,
      images: [
        { loc: `${origin}/i/${i}-a.jpg`, caption: caption(i) },
        { loc: `${origin}/i/${i}-b.jpg`, caption: caption(i + 1) },
      ],
    }));
    await new D1RecordWriter(baseEnv.PART_B).upsert(validRecords(env, inputs), Date.now() - 60_000);
    const rows = await d1RecordStore(baseEnv.PART_B).copy!.page(origin, { section: "", key: -1 }, 500);
    expect(rows).toHaveLength(500);
    const target = recording(baseEnv.PART_C);
    expect(await d1RecordStore(target.db).copy!.put(rows, "missing")).toBe(500);
    expect(target.bound.length).toBeGreaterThan(1);
    for (const bytes of target.bound) expect(bytes).toBeLessThanOrEqual(D1_MAX_VALUE_BYTES / 2);
    const copied = await baseEnv.PART_C.prepare("SELECT count(*) AS n FROM urls WHERE origin = ?1 AND ext IS NOT NULL")
      .bind(origin)
      .first<{ n: number }>();
    expect(copied?.n).toBe(500);
  });
});
