/**
 * Does a site's lastmod look trustworthy (src/lastmod/trust.ts, status `lastmod`): per section, over
 * the site's newest changes, lastmods written with the record (within a minute of its change stamp)
 * and lastmods in the future; a bounded sample whatever the site's size, on D1, KV and a site over
 * several D1 databases.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { d1RecordStore } from "../../src/adapters/d1/record-store.ts";
import type { ValidRecord } from "../../src/core/validate.ts";
import { Meter, metered } from "../../src/jobs/meter.ts";
import { meteredEnv } from "../../src/jobs/metered-env.ts";
import { LASTMOD_SAMPLE, lastmodTrust } from "../../src/lastmod/trust.ts";
import { services, servicesFor } from "../../src/services.ts";
import { kvFixture } from "./fixtures/kv.ts";
import { d1Fixture } from "./fixtures/sources.ts";
import { call, freshOrigin, range, validRecords } from "./support.ts";

beforeAll(async () => {
  for (const name of ["PART_B", "PART_C"] as const) await applyD1Migrations(baseEnv[name], baseEnv.TEST_MIGRATIONS);
});

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** A site's history: a CMS stamping lastmod with the write time, an honest section, future dates, records without lastmod, a deleted stamped one. */
function history(origin: string, now: number) {
  const t = now - 2 * DAY;
  const rec = (section: string, i: number, lastmod?: string) => ({ loc: `${origin}/${section}/${i}`, section, ...(lastmod ? { lastmod } : {}) });
  return {
    // Written at t with lastmod t + 20 s (7), t - 45 s (1), and one written at t with lastmod a day before (honest).
    stamped: { at: t, inputs: [...range(7).map((i) => rec("cms", i, iso(t + 20_000))), rec("cms", 7, iso(t - 45_000)), rec("cms", 8, iso(t - DAY))] },
    // Honest: lastmods weeks before the write, a date alone, none at all.
    honest: {
      at: t + 1_000,
      inputs: [...range(5).map((i) => rec("blog", i, iso(t - (i + 10) * DAY))), rec("blog", 5, "2020-01-02"), rec("blog", 6), rec("blog", 7)],
    },
    // Ahead of the clock: two hours (counted), two minutes (clock skew, not counted).
    ahead: {
      at: t + 2_000,
      inputs: [rec("events", 0, iso(now + 2 * 3_600_000)), rec("events", 1, iso(now + 2 * 3_600_000)), rec("events", 2, iso(now + 120_000))],
    },
    gone: [`${origin}/cms/0`, `${origin}/cms/1`],
    goneAt: t + 3_000,
  };
}

const EXPECTED = [
  { name: "blog", sampled: 8, sameMinuteAsWrite: 0, future: 0 },
  { name: "cms", sampled: 7, sameMinuteAsWrite: 6, future: 0 },
  { name: "events", sampled: 3, sameMinuteAsWrite: 0, future: 2 },
];

describe("lastmod trust", () => {
  for (const fixture of [d1Fixture, kvFixture]) {
    it(`${fixture.name}: counts lastmods written with the record and lastmods in the future, per section, live records only`, async () => {
      const origin = freshOrigin(`lmt${fixture.name}`);
      const e = fixture.env({ SITES: origin });
      const now = Date.now();
      const h = history(origin, now);
      for (const step of [h.stamped, h.honest, h.ahead]) await fixture.upsert(e, validRecords(e, step.inputs), step.at);
      await fixture.delete(e, h.gone, h.goneAt);

      expect(await lastmodTrust(services(e).store, origin, now)).toEqual({ sections: EXPECTED });
      // A store without the capability: null, nothing read.
      expect(await lastmodTrust({ sample: null }, origin, now)).toBeNull();
      // Another site's records are not this one's.
      expect(await lastmodTrust(services(e).store, freshOrigin("lmtempty"), now)).toEqual({ sections: [] });
    });
  }

  it("is in the status JSON as `lastmod`", async () => {
    const origin = freshOrigin("lmtstatus");
    const e = { ...baseEnv, SITES: origin, INDEXNOW_ENDPOINT: "", PING_URLS: "" } as Env;
    const now = Date.now();
    const h = history(origin, now);
    for (const step of [h.stamped, h.honest, h.ahead]) await d1Fixture.upsert(e, validRecords(e, step.inputs), step.at);
    await d1Fixture.delete(e, h.gone, h.goneAt);
    const res = await call(e, `${origin}/sitemap-admin/status`, { headers: AUTH });
    expect(res.status).toBe(200);
    const status = (await res.json()) as { lastmod: unknown };
    expect(status.lastmod).toEqual({ sections: EXPECTED });
  });

  it("reads one bounded statement whatever the site's size: 3,000 records, the newest 1,000 changes, tombstones within the bound", async () => {
    const origin = freshOrigin("lmtbig");
    const e = { ...baseEnv, SITES: origin } as Env;
    const t = Date.now() - DAY;
    const inputs = (from: number, n: number, lastmodOf: (i: number) => string) =>
      range(n, from).map((i) => ({ loc: `${origin}/p/${i}`, section: i % 2 === 0 ? "even" : "odd", lastmod: lastmodOf(i) }));
    // 2,000 older records with lastmod = write time, then 1,000 newer ones with honest lastmods, written a second apart per batch of 100.
    const records: { at: number; batch: ValidRecord[] }[] = [];
    for (let b = 0; b < 20; b++)
      records.push({
        at: t + b * 1_000,
        batch: validRecords(
          e,
          inputs(b * 100, 100, () => iso(t + b * 1_000)),
        ),
      });
    for (let b = 20; b < 30; b++)
      records.push({
        at: t + b * 1_000,
        batch: validRecords(
          e,
          inputs(b * 100, 100, () => "2024-05-01"),
        ),
      });
    for (const { at, batch } of records) await d1Fixture.upsert(e, batch, at);

    const reads: number[] = [];
    const store = d1RecordStore(meteredEnv(e).DB, { observe: (meta) => reads.push(meta.rows_read ?? Number.NaN) });
    const meter = new Meter();
    const trust = await metered(meter, () => lastmodTrust(store, origin, Date.now()));
    // Only the newest 1,000 changes: the honest ones; the stamped 2,000 below them are never read.
    expect(trust).toEqual({
      sections: [
        { name: "even", sampled: 500, sameMinuteAsWrite: 0, future: 0 },
        { name: "odd", sampled: 500, sameMinuteAsWrite: 0, future: 0 },
      ],
    });
    expect(LASTMOD_SAMPLE).toBe(1_000);
    expect(meter.d1Queries).toBe(1);
    expect(reads).toHaveLength(1);
    expect(reads[0]).toBeLessThanOrEqual(LASTMOD_SAMPLE);

    // 500 of the newest deleted: they keep their place in the bound (still one read of ≤ 1,000 rows), the next 500 are stamped ones.
    await d1Fixture.delete(
      e,
      range(500, 2_000).map((i) => `${origin}/p/${i}`),
      t + 40_000,
    );
    reads.length = 0;
    const after = new Meter();
    const sampled = await metered(after, () => lastmodTrust(store, origin, Date.now()));
    expect(sampled).toEqual({
      sections: [
        { name: "even", sampled: 250, sameMinuteAsWrite: 0, future: 0 },
        { name: "odd", sampled: 250, sameMinuteAsWrite: 0, future: 0 },
      ],
    });
    expect(after.d1Queries).toBe(1);
    expect(reads[0]).toBeLessThanOrEqual(LASTMOD_SAMPLE);
  });

  it("a site over several databases: each partition reads its share of the bound", async () => {
    const origin = freshOrigin("lmtparts");
    const e = { ...baseEnv, SITES: origin, SITE_DATABASES: `${origin}=DB,PART_B,PART_C`, INDEXNOW_ENDPOINT: "", PING_URLS: "" } as Env;
    const now = Date.now();
    const h = history(origin, now);
    const s = servicesFor(e, origin);
    for (const step of [h.stamped, h.honest, h.ahead]) await s.store.writer.upsert(validRecords(e, step.inputs), step.at);
    await s.store.writer.delete(h.gone, h.goneAt);
    expect(await lastmodTrust(servicesFor(e, origin).store, origin, now)).toEqual({ sections: EXPECTED });

    // 1,500 more records: three shares of 333 rows at most, one sample statement and one layout read per partition.
    const t = now - DAY;
    const more = validRecords(
      e,
      range(1_500).map((i) => ({ loc: `${origin}/more/${i}`, section: "more", lastmod: iso(t) })),
    );
    for (let i = 0; i < more.length; i += 500) await s.store.writer.upsert(more.slice(i, i + 500), t + i);
    const meter = new Meter();
    const trust = await metered(meter, () => lastmodTrust(servicesFor(meteredEnv(e), origin).store, origin, now));
    const sampled = trust!.sections.reduce((sum, section) => sum + section.sampled, 0);
    expect(sampled).toBeLessThanOrEqual(LASTMOD_SAMPLE);
    expect(sampled).toBeGreaterThan(900);
    expect(trust!.sections.find((section) => section.name === "more")?.sameMinuteAsWrite).toBeGreaterThan(0);
    // Three partitions: one sample statement and one layout read each.
    expect(meter.d1Queries).toBeLessThanOrEqual(3 * 2);
  });
});
