/**
 * Exactly once across a move (issue exactly-once, items 1 and 2): the move's forward, copy and
 * catch-ups follow each old database's commit order (migration 0023), not the stamps writers put
 * on rows, so what an old home holds last is what the new home serves after the flip, whatever
 * the stamps say and however far before the catch-up's cursor they lie.
 *
 * The orders are generated: every program of two writes to a moving loc (PUT or DELETE, through
 * the site's store or in its old home alone as a sync's or a mirror's commit does, stamped before
 * the move's start or after it, independently of commit order), each with and without a deletion
 * in the old home after the flip by a commit that read the layout before it. The model: the
 * loc's last committed write.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { partitionOf } from "../../src/partitions/home.ts";
import { rebalanceStep } from "../../src/partitions/rebalance.ts";
import { servicesFor } from "../../src/services.ts";
import type { Services } from "../../src/services-type.ts";
import { call, freshOrigin, validRecords } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const DATABASES = ["DB", "PART_B", "PART_C", "PART_D"] as const;
const AFTER_FLIP = 60_000;

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C", "PART_D"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

const envOf = (origin: string, count: number): Env =>
  ({
    ...baseEnv,
    SITES: origin,
    SITE_DATABASES: `${origin}=${DATABASES.slice(0, count).join(",")}`,
    MAX_URLS_PER_SHARD: "40",
    INDEXNOW_ENDPOINT: "",
    PING_URLS: "",
  }) as Env;

/** The lastmod the admin API answers for a loc (null: 404). */
async function served(env: Env, origin: string, loc: string): Promise<string | null> {
  const res = await call(env, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(loc)}`, { headers: AUTH });
  return res.status === 404 ? null : (((await res.json()) as { lastmod?: string }).lastmod ?? null);
}

/**
 * One write of the program. `at`: when it commits — `move` through the site's store (its old
 * home, then its forward), `old-home` in the old home only (a sync's or a mirror's commit, a write
 * killed before its forward), both between the move's steps (`step` of them run before it);
 * `after-flip`: in the old home only, after the flip, by a writer that read the layout before it.
 * `stamp`: its offset (minutes) from the move's start, negative as a mirror's job start may be.
 */
interface Write {
  kind: "put" | "delete";
  at: "move" | "old-home" | "after-flip";
  stamp: number;
}

/** Every write before the flip: kind × where × stamp (10 minutes before the move's start, or 5 after). */
const WRITES: Write[] = (["put", "delete"] as const).flatMap((kind) =>
  (["move", "old-home"] as const).flatMap((at) => [-10, 5].map((stamp) => ({ kind, at, stamp }))),
);
/** After the flip, what reaches an old home alone is a commit's deletion: stamped before everything. */
const LATE_DELETE: Write = { kind: "delete", at: "after-flip", stamp: -20 };
/** Every pair of writes before the flip, every other one followed by the late deletion. */
const PROGRAMS: Write[][] = WRITES.flatMap((a, i) => WRITES.map((b, j) => ((i + j) % 2 === 0 ? [a, b] : [a, b, LATE_DELETE])));

/** A site over three databases with `count` records, a fourth appended, its move started; a loc that moves, its old home. */
async function movingSite(label: string, count: number): Promise<{ origin: string; four: Env; site: Services; loc: string; home: number; start: number }> {
  const origin = freshOrigin(label);
  const three = envOf(origin, 3);
  const inputs = Array.from({ length: count }, (_, i) => ({ loc: `${origin}/p/${i}`, lastmod: "2026-01-01" }));
  const put = await call(three, `${origin}/sitemap-admin/urls`, {
    method: "PUT",
    headers: { ...AUTH, "Content-Type": "application/json" },
    body: JSON.stringify(inputs),
  });
  expect(put.status).toBe(200);
  const loc = inputs.map((r) => r.loc).find((l) => partitionOf(l, 4) === 3)!;
  expect(loc).toBeDefined();
  const four = envOf(origin, 4);
  const site = servicesFor(four, origin);
  const start = Date.now();
  expect(await rebalanceStep(site, origin, { now: start })).toMatchObject({ state: "started" });
  return { origin, four, site, loc, home: partitionOf(loc, 3), start };
}

/** Runs one write: through the site's store, or in the loc's old home alone. Returns its lastmod (null: a deletion). */
async function apply(env: Env, s: { site: Services; loc: string; home: number; start: number }, write: Write, n: number): Promise<string | null> {
  const stamp = s.start + write.stamp * 60_000;
  const writer = write.at === "move" ? s.site.store.writer : s.site.partitions![s.home]!.store.writer;
  if (write.kind === "delete") {
    await writer.delete([s.loc], stamp);
    return null;
  }
  const lastmod = `2026-02-${String((n % 28) + 1).padStart(2, "0")}`;
  await writer.upsert(validRecords(env, [{ loc: s.loc, lastmod }]), stamp);
  return lastmod;
}

/** Runs the move to its flip, the writes due before it between its steps. */
async function moveWith(s: Awaited<ReturnType<typeof movingSite>>, writes: readonly Write[], last: { value: string | null }): Promise<void> {
  const before = writes.filter((w) => w.at !== "after-flip");
  let n = 0;
  for (let i = 0; i < 40; i++) {
    const write = before[n];
    if (write) last.value = await apply(s.four, s, write, n++);
    const step = await rebalanceStep(s.site, s.origin, { maxRows: 40 });
    if (step.state === "flipped" && n >= before.length) return;
    if (step.state === "flipped") {
      // Flipped before the program ran out: the rest is written through the site's store (its new home).
      for (const rest of before.slice(n)) last.value = await apply(s.four, s, { ...rest, at: "move" }, n++);
      return;
    }
  }
  throw new Error("the move did not flip within 40 steps");
}

describe("a move follows commit order, not stamps", () => {
  it(`serves each loc's last committed write after the flip and after the catch-up that follows it (${PROGRAMS.length} programs)`, async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    expect(PROGRAMS.length).toBe(64);
    for (const writes of PROGRAMS) {
      const s = await movingSite("exactly-once", 60);
      const last: { value: string | null } = { value: "2026-01-01" };
      await moveWith(s, writes, last);
      const program = JSON.stringify(writes);
      expect(await served(s.four, s.origin, s.loc), `after the flip: ${program}`).toBe(last.value);
      let n = 100;
      for (const write of writes.filter((w) => w.at === "after-flip")) last.value = await apply(s.four, s, write, n++);
      const { flippedAt } = await s.site.layouts!.read();
      expect((await rebalanceStep(s.site, s.origin, { now: flippedAt! + AFTER_FLIP })).state).toBe("caught-up");
      expect(await served(s.four, s.origin, s.loc), `after the catch-up: ${program}`).toBe(last.value);
    }
  }, 300_000);

  // Defect 3 of the issue, and its control: a PUT stamped T+5 that commits before a DELETE stamped T.
  it.each([
    {
      order: "PUT at T+5, then DELETE at T",
      writes: [
        { kind: "put", stamp: 5 },
        { kind: "delete", stamp: 0 },
      ],
      expected: null,
    },
    {
      order: "DELETE at T, then PUT at T+5 (control)",
      writes: [
        { kind: "delete", stamp: 0 },
        { kind: "put", stamp: 5 },
      ],
      expected: "2026-02-02",
    },
    {
      order: "DELETE at T+5, then PUT at T",
      writes: [
        { kind: "delete", stamp: 5 },
        { kind: "put", stamp: 0 },
      ],
      expected: "2026-02-02",
    },
  ] as const)("$order: the same answer before the flip and after it", async ({ writes, expected }) => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const s = await movingSite("commit-order", 60);
    expect((await rebalanceStep(s.site, s.origin, { maxRows: 20 })).state).toBe("copying");
    let n = 0;
    for (const w of writes) await apply(s.four, s, { ...w, at: "move" }, n++);
    expect(await served(s.four, s.origin, s.loc), "before the flip").toBe(expected);
    for (let i = 0; i < 40 && (await rebalanceStep(s.site, s.origin, { maxRows: 1_000 })).state !== "flipped"; i++);
    expect((await s.site.layouts!.read()).settled).toBe(4);
    expect(await served(s.four, s.origin, s.loc), "after the flip").toBe(expected);
  });

  // Defect 2 of the issue: deletions in the old home alone stamped long before the catch-up's cursor.
  it("a commit's deletions stamped before the catch-up's cursor reach the new home, before the flip and after it", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const origin = freshOrigin("stale-stamps");
    const three = envOf(origin, 3);
    const inputs = Array.from({ length: 120 }, (_, i) => ({ loc: `${origin}/p/${i}`, lastmod: "2026-01-01" }));
    const put = await call(three, `${origin}/sitemap-admin/urls`, {
      method: "PUT",
      headers: { ...AUTH, "Content-Type": "application/json" },
      body: JSON.stringify(inputs),
    });
    expect(put.status).toBe(200);
    const moving = inputs.map((r) => r.loc).filter((l) => partitionOf(l, 4) === 3);
    expect(moving.length).toBeGreaterThan(6);
    const four = envOf(origin, 4);
    const site = servicesFor(four, origin);
    const start = Date.now();
    expect(await rebalanceStep(site, origin, { now: start })).toMatchObject({ state: "started" });
    // The copy runs to its end (every moving row is in its new home)…
    let state = "";
    for (let i = 0; i < 40 && (state === "" || state === "copying"); i++) state = (await rebalanceStep(site, origin, { maxRows: 20 })).state;
    expect(state).toBe("building");
    // …then commits in the old homes alone delete, stamped as a sync commit stamps its chunks (the
    // call's start) or a mirror its commit (the job's start): minutes before the move began.
    const early = moving.slice(0, 3);
    for (const loc of early) await site.partitions![partitionOf(loc, 3)]!.store.writer.delete([loc], start - 10 * 60_000);
    for (let i = 0; i < 40 && state !== "flipped"; i++) state = (await rebalanceStep(site, origin, { maxRows: 1_000 })).state;
    expect(state).toBe("flipped");
    for (const loc of early) expect(await served(four, origin, loc), `${loc} after the flip`).toBeNull();
    // After the flip, a commit that read the layout before it deletes in an old home, stamped before the flip.
    const late = moving.slice(3, 6);
    const { flippedAt } = await site.layouts!.read();
    for (const loc of late) await site.partitions![partitionOf(loc, 3)]!.store.writer.delete([loc], flippedAt! - 10 * 60_000);
    expect(await rebalanceStep(site, origin, { now: flippedAt! + AFTER_FLIP })).toMatchObject({ state: "caught-up", copied: late.length });
    for (const loc of late) expect(await served(four, origin, loc), `${loc} after the catch-up`).toBeNull();
    // The control: every other moving loc is served as written.
    for (const loc of moving.slice(6)) expect(await served(four, origin, loc)).toBe("2026-01-01");
  });
});
