/**
 * Issue 50 item 7: the host resolver at 20,000 registered sites reads D1 once per MANIFEST_CACHE_TTL
 * per isolate — the list, which carries every site whole — and never per request, for known hosts
 * (every one of the 20,000, twice) or unknown ones; the FIFO of 5,000 records it replaces read D1 for
 * every host past it. Queries are counted at the D1 binding (real D1), never timed (bench/registry-resolve.ts).
 * Settings larger than LISTED_SETTINGS_BYTES stay out of the list (its memory bounded: src/registry/resolve.test.ts
 * measures it): such a site's record is read by its key on its first request, then kept.
 */
import { env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { D1SiteRegistry } from "../../src/adapters/d1/site-registry.ts";
import { LISTED_SETTINGS_BYTES, RegistryResolver } from "../../src/registry/resolve.ts";
import { countingEnv } from "./support/counting-env.ts";

const SITES = 20_000;

describe("the resolver at 20,000 sites", () => {
  it("one D1 query for 40,000 known and 2,000 unknown hosts; each resolves to its own record", async () => {
    const prefix = `https://scale-${Math.random().toString(36).slice(2, 8)}-`;
    const now = Date.now();
    await baseEnv.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?2 - 1)
       INSERT INTO registry_sites (origin, settings, token_hash, created_at, updated_at, deleted_at, host)
       SELECT ?1 || i || '.test', json_object('DEFAULT_SECTION', 's' || i), printf('%064d', i), ?3, ?3 + i, NULL, substr(?1 || i || '.test', 9) FROM n`,
    )
      .bind(prefix, SITES, now)
      .run();
    const counts = { d1: 0, kv: 0 };
    const e = countingEnv(baseEnv as Env, counts);
    const resolver = new RegistryResolver(new D1SiteRegistry(e.DB), 60_000);
    const ignore = () => undefined;
    const order = Array.from({ length: SITES }, (_, i) => i).sort(() => Math.random() - 0.5);
    for (const i of [...order, ...order]) {
      const site = await resolver.resolve(`${prefix}${i}.test`, now, ignore);
      expect(site?.settings["DEFAULT_SECTION"]).toBe(`s${i}`);
    }
    for (let i = 0; i < 2_000; i++) expect(await resolver.resolve(`${prefix}unknown-${i}.test`, now, ignore)).toBeNull();
    expect(counts.d1).toBe(1);
    // A write (or a job) on a list older than the TTL reads it again first: one more query, then none.
    await resolver.resolve(`${prefix}1.test`, now + 60_001, ignore, true);
    await resolver.resolve(`${prefix}2.test`, now + 60_002, ignore, true);
    expect(counts.d1).toBe(2);
    // The isolate that ran a PATCH serves the new record at once, with no query.
    const patched = (await resolver.resolve(`${prefix}3.test`, now + 60_003, ignore))!;
    resolver.remember({ ...patched, settings: { DEFAULT_SECTION: "patched" } });
    expect((await resolver.resolve(`${prefix}3.test`, now + 60_004, ignore))?.settings["DEFAULT_SECTION"]).toBe("patched");
    expect(counts.d1).toBe(2);
    await baseEnv.DB.prepare("DELETE FROM registry_sites WHERE origin LIKE ?1 || '%'").bind(prefix).run();
  }, 120_000);

  it("sites of large settings are listed without them: each read by its key once, on its first request, then kept", async () => {
    const prefix = `https://large-${Math.random().toString(36).slice(2, 8)}-`;
    const now = Date.now();
    // 200 sites, every third with 16 KB of settings (the rest small).
    await baseEnv.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 199)
       INSERT INTO registry_sites (origin, settings, token_hash, created_at, updated_at, deleted_at, host)
       SELECT ?1 || i || '.test',
              json_object('DEFAULT_SECTION', 's' || i, 'PING_URLS', CASE WHEN i % 3 = 0 THEN replace(hex(zeroblob(8192)), '0', 'x') ELSE 'x' END),
              printf('%064d', i), ?2, ?2, NULL, substr(?1 || i || '.test', 9) FROM n`,
    )
      .bind(prefix, now)
      .run();
    const listed = (await new D1SiteRegistry(baseEnv.DB).liveSites(LISTED_SETTINGS_BYTES)).filter((s) => s.origin.startsWith(prefix));
    expect(listed).toHaveLength(200);
    for (const s of listed) expect(s.settings === null, s.origin).toBe(Number(/-(\d+)\.test$/.exec(s.origin)![1]) % 3 === 0);
    const counts = { d1: 0, kv: 0 };
    const e = countingEnv(baseEnv as Env, counts);
    const resolver = new RegistryResolver(new D1SiteRegistry(e.DB), 60_000);
    const ignore = () => undefined;
    for (let round = 0; round < 3; round++)
      for (let i = 0; i < 200; i++) {
        const site = await resolver.resolve(`${prefix}${i}.test`, now, ignore);
        expect(site?.settings["DEFAULT_SECTION"]).toBe(`s${i}`);
        expect(site?.settings["PING_URLS"]).toHaveLength(i % 3 === 0 ? 16_384 : 1);
      }
    // The list, then each of the 67 large sites once.
    expect(counts.d1).toBe(1 + 67);
    await baseEnv.DB.prepare("DELETE FROM registry_sites WHERE origin LIKE ?1 || '%'").bind(prefix).run();
  }, 60_000);
});
