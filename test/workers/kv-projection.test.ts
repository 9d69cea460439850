/**
 * The writer object's projection under KV's documented behaviour (support/eventual-kv.ts): a write
 * may stay in the air longer than the pass that started it, and longer than the object instance
 * (Durable Objects are reset and evicted); KV makes each key visible on its own. So the object
 * always has an alarm while anything is pending, and writes an overflow value, settled, before any
 * block whose stub points at it (issue 34).
 */
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { type BlockEntry, blockName, overflowName, sitePrefix } from "../../src/adapters/kv/layout.ts";
import { writerOf } from "../../src/adapters/kv/object-protocol.ts";
import type { KvSiteWriter } from "../../src/adapters/kv/writer-object.ts";
import { services } from "../../src/services.ts";
import { PROPAGATION_MS } from "./support/eventual-kv.ts";
import { inObject, inSql, kvWriters, objectStatus, objectUsesKv, settled } from "./support/kv-objects.ts";
import { batch, eventualSite, putUntilStored, sleep } from "./support/kv-site.ts";
import { range } from "./support.ts";

let restores: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const restore of restores) await restore();
  restores = [];
});

const stub = (origin: string) => env.KV_WRITERS.get(env.KV_WRITERS.idFromName(origin)) as DurableObjectStub<KvSiteWriter>;
const alarmOf = (origin: string) => runInDurableObject(stub(origin), (_instance: KvSiteWriter, state) => state.storage.getAlarm());

describe("the projection's alarm", () => {
  it("stays set while a write outlives its pass; the object's next instance projects the rows with no further write", async () => {
    const { origin, e, kv } = await eventualSite("stall", restores);
    const block0 = blockName(origin, "pages", 0);
    kv.hold((name) => name === block0);
    await putUntilStored(e, origin, batch(origin, 1, 10));
    for (let i = 0; i < 100 && kv.held().length === 0; i++) await sleep(20);
    expect(kv.held()).toEqual([block0]);
    // The pass that started the write stops waiting for it (10 s) and ends; the write is still in the air.
    const left = await writerOf(kvWriters(), origin).settle(origin, 0);
    expect(left.pending).toBe(1);
    expect(await alarmOf(origin), "an alarm while a row is pending").not.toBeNull();

    // The instance goes away before its write settles (it never will: the write was lost with it).
    await evictDurableObject(stub(origin));
    kv.hold(() => false);
    restores.push(await objectUsesKv(origin, kv.kv));
    expect((await objectStatus(origin)).pending).toBe(1);
    // The next instance leaves the lost write's block alone for its fence (120 s); as if that had passed:
    await inSql(origin, (sql) => {
      sql.exec("UPDATE pending SET put_at = put_at - 121000");
    });
    // Nothing is written to the site: the alarm alone brings the block to KV.
    expect(await runDurableObjectAlarm(stub(origin))).toBe(true);
    for (let i = 0; i < 50 && (await objectStatus(origin)).pending > 0; i++) {
      if (!(await runDurableObjectAlarm(stub(origin)))) await sleep(100);
    }
    expect((await objectStatus(origin)).pending).toBe(0);
    const landed = kv.landed.filter((w) => w.name === block0);
    expect(landed).toHaveLength(1);
    expect(JSON.parse(landed[0]!.value!)).toHaveLength(10);
  });
});

/** Image entries that put a record's entry over the 4,096-byte inline limit: an overflow value and a stub. */
const bigImages = range(40).map((i) => ({ loc: `https://cdn.example/${"img".repeat(30)}/${i}.jpg` }));

describe("the projection's order", () => {
  it("never lands a block whose stub's overflow value has not landed, with the same stamp, first; even when a batch commits while the pass writes blocks", async () => {
    const { origin, e, kv } = await eventualSite("order", restores);
    // Nine sections: nine blocks, one more than the pass writes at once (8 in flight).
    const small = range(9).map((i) => ({ loc: `${origin}/s${i}/r`, section: `s${i}` }));
    await putUntilStored(e, origin, small);
    await settled(origin);

    // Every block write of the next pass is held: eight are in the air, the ninth waits for a free lane.
    kv.hold((name) => name.startsWith(sitePrefix(origin)));
    await putUntilStored(
      e,
      origin,
      small.map((r) => ({ ...r, lastmod: "2026-11-02" })),
    );
    for (let i = 0; i < 100 && kv.held().length < 8; i++) await sleep(20);
    expect(kv.held()).toHaveLength(8);
    // Meanwhile every record grows past the inline limit: each block now needs a stub and an overflow value.
    const big = small.map((r) => ({ ...r, lastmod: "2026-11-03", images: bigImages }));
    await putUntilStored(e, origin, big);
    kv.hold(() => false);
    await inObject(origin, () => kv.release());
    await settled(origin);

    // At every point of the projection, in the order writes landed: a stub's value was there first.
    const values = new Map<string, number | null>();
    let stubs = 0;
    for (const write of kv.landed) {
      if (write.name.startsWith("v#")) {
        values.set(write.name, write.value === null ? null : (JSON.parse(write.value) as BlockEntry).u);
        continue;
      }
      if (!write.name.startsWith(sitePrefix(origin)) || write.value === null) continue;
      const section = write.name.slice(sitePrefix(origin).length).split("#")[0]!;
      for (const entry of JSON.parse(write.value) as BlockEntry[]) {
        if (entry.v !== 1) continue;
        stubs++;
        expect(values.get(overflowName(origin, section, entry.k)), `${write.name} landed with a stub for key ${entry.k}`).toBe(entry.u);
      }
    }
    expect(stubs).toBe(9);

    // And once KV has settled everywhere, every record reads whole.
    kv.advance(PROPAGATION_MS + 1_000);
    const reader = services(e).store.reader;
    for (const r of small) {
      const section = r.section;
      let images = 0;
      for await (const page of reader.recordPages({ origin, section, firstKey: 1, lastKey: 1_000 })) {
        for (const record of page) images += record.ext?.images?.length ?? 0;
      }
      expect(images, section).toBe(40);
    }
  });
});
