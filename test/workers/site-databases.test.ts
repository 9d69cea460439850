/**
 * Sites spread over several D1 databases (SITE_DATABASES): each site's records, manifest and
 * regeneration state live in its own database, requests and the cron find it by origin, and a
 * bad mapping is a startup ConfigError that names the variable.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env as baseEnv } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { D1RecordWriter } from "../../src/adapters/d1/writer.ts";
import { ConfigError, parseConfig } from "../../src/config.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { databaseServices, servicesFor } from "../../src/services.ts";
import { rebuildManifest } from "../../src/sitemaps.ts";
import { regenerateAll } from "./support/regenerate-all.ts";
import { call, freshOrigin, locsOf, validRecords } from "./support.ts";

beforeAll(async () => {
  await applyD1Migrations(baseEnv.SITE_B_DB, baseEnv.TEST_MIGRATIONS);
});

const count = async (db: D1Database, table: string, origin: string): Promise<number> =>
  (await db.prepare(`SELECT count(*) AS n FROM ${table} WHERE origin = ?1`).bind(origin).first<{ n: number }>())!.n;

describe("SITE_DATABASES", () => {
  it("keeps each site in its own database, served and regenerated from there", async () => {
    const a = freshOrigin("on-db");
    const b = freshOrigin("on-b");
    const env = { ...baseEnv, SITES: `${a} ${b}`, SITE_DATABASES: `${b}=SITE_B_DB`, INDEXNOW_ENDPOINT: "", PING_URLS: "" } as Env;
    await new D1RecordWriter(baseEnv.DB).upsert(validRecords(env, demoSection(a, "pages", 30)));
    await new D1RecordWriter(baseEnv.SITE_B_DB).upsert(validRecords(env, demoSection(b, "pages", 40)));
    for (const origin of [a, b]) await rebuildManifest(servicesFor(env, origin), origin);

    // Manifests were written next to each site's records, and nowhere else.
    expect([await count(baseEnv.DB, "manifests", a), await count(baseEnv.SITE_B_DB, "manifests", a)]).toEqual([1, 0]);
    expect([await count(baseEnv.DB, "manifests", b), await count(baseEnv.SITE_B_DB, "manifests", b)]).toEqual([0, 1]);

    const served = async (origin: string) => {
      const res = await call(env, `${origin}/sitemap-pages-1.xml`);
      expect(res.status).toBe(200);
      return locsOf(await res.text());
    };
    expect(await served(a)).toHaveLength(30);
    expect(await served(b)).toEqual(validRecords(env, demoSection(b, "pages", 40)).map((r) => r.loc));

    // One services object per database, each with only its own sites.
    expect(databaseServices(env).map((s) => [...s.config.sites])).toEqual([[a], [b]]);

    // The cron visits both sites, each against its own database.
    const summaries = await regenerateAll(databaseServices(env));
    expect(summaries.map((s) => s.origin).sort()).toEqual([a, b].sort());
    expect([await count(baseEnv.DB, "regen_runs", b), await count(baseEnv.SITE_B_DB, "regen_runs", b)]).toEqual([0, 1]);
    expect([await count(baseEnv.DB, "regen_runs", a), await count(baseEnv.SITE_B_DB, "regen_runs", a)]).toEqual([1, 0]);
  });

  it("an unbound database is a ConfigError naming SITE_DATABASES in the log, answered 503 at the first request", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const a = freshOrigin("bad-binding");
    const env = { ...baseEnv, SITES: a, SITE_DATABASES: `${a}=NO_SUCH_DB` } as Env;
    expect(() => servicesFor(env, a)).toThrow(ConfigError);
    expect(() => databaseServices(env)).toThrow(/SITE_DATABASES/);
    const res = await call(env, `${a}/sitemap.xml`);
    expect(res.status).toBe(503);
    expect(await res.text()).not.toContain("SITE_DATABASES");
    expect(log.mock.calls.flat().join(" ")).toContain("SITE_DATABASES");
    log.mockRestore();
  });

  it("rejects a site that is not in SITES and a malformed pair, naming the variable", () => {
    const a = freshOrigin("parsed");
    const config = (value: string) => () => parseConfig({ SITES: a, SITE_DATABASES: value });
    expect(config(`https://elsewhere.example=SITE_B_DB`)).toThrow(/SITE_DATABASES/);
    expect(config(`${a}=not-a-binding`)).toThrow(/SITE_DATABASES/);
    expect(config(`${a}`)).toThrow(/SITE_DATABASES/);
    expect(config(`${a}=SITE_B_DB ${a}=DB`)).toThrow(/SITE_DATABASES/);
    expect(parseConfig({ SITES: a, SITE_DATABASES: `${a}/=SITE_B_DB` }).siteDatabases).toEqual(new Map([[a, ["SITE_B_DB"]]]));
    expect(parseConfig({ SITES: a }).siteDatabases.size).toBe(0);
  });
});
