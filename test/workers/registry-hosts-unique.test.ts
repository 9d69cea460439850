/**
 * Migration 0027: the registry's host is UNIQUE. The database itself refuses a second row for a host;
 * on a database whose rows share hosts (registered before 0026's rule) the migration does not fail,
 * deletes nothing, and leaves each host to one row (a live one before one being deleted, then the
 * earliest registered, then the first origin), the others' hosts written `<host> <origin>`, which
 * keep the host from being registered anew while they are left. Two registrations of one host sent
 * at once: one 201, one 409.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { siteEnv } from "./notify-support.ts";
import { bearer } from "./support/admin.ts";
import { call, freshOrigin } from "./support.ts";

const migration = (): string[] => {
  const found = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0027_"));
  expect(found).toBeDefined();
  return found!.queries;
};

const insert = (origin: string, host: string, createdAt: number, deletedAt: number | null) =>
  env.DB.prepare("INSERT INTO registry_sites (origin, token_hash, created_at, updated_at, deleted_at, host) VALUES (?1, ?1, ?2, ?2, ?3, ?4)").bind(
    origin,
    createdAt,
    deletedAt,
    host,
  );

const register = (e: Env, platform: string, origin: string) =>
  call(e, `${platform}/sitemap-admin/sites`, {
    method: "POST",
    headers: { ...bearer, "Content-Type": "application/json" },
    body: JSON.stringify({ origin }),
  });

describe("the registry's host", () => {
  it("is one row's: the database refuses a second row for it", async () => {
    const host = `h-${Math.random().toString(36).slice(2, 9)}.test`;
    await insert(`https://${host}`, host, 1, null).run();
    await expect(insert(`http://${host}`, host, 2, null).run()).rejects.toThrow(/UNIQUE/);
  });

  it("registered twice at once: one 201 and one 409", async () => {
    const platform = freshOrigin("platform");
    const e = siteEnv(platform);
    const host = `twice-${Math.random().toString(36).slice(2, 9)}.test`;
    const answers = await Promise.all([register(e, platform, `https://${host}`), register(e, platform, `http://${host}:8443`)]);
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409]);
  });
});

/** Rows as registered before 0026's rule: a few hosts, each origin one of a host's schemes and ports, live or being deleted. */
const rowsArb = fc.uniqueArray(
  fc.record({
    host: fc.constantFrom("a.test", "b.test", "c.test"),
    scheme: fc.constantFrom("https", "http"),
    port: fc.constantFrom("", ":8443", ":8787"),
    createdAt: fc.integer({ min: 1, max: 4 }),
    deleted: fc.boolean(),
  }),
  { minLength: 1, maxLength: 8, selector: (r) => `${r.scheme}://${r.host}${r.port}` },
);

describe("migration 0027 on a database whose rows share hosts", () => {
  it("keeps every row, each host to one (live first, then earliest, then first origin), the others marked so the host stays taken", async () => {
    await fc.assert(
      fc.asyncProperty(rowsArb, async (rows) => {
        // As the database was before 0027: rows sharing hosts under 0026's index.
        await env.DB.prepare("DROP INDEX IF EXISTS registry_sites_one_per_host").run();
        await env.DB.prepare("CREATE INDEX IF NOT EXISTS registry_sites_host ON registry_sites (host)").run();
        await env.DB.prepare("DELETE FROM registry_sites").run();
        const origins = rows.map((r) => `${r.scheme}://${r.host}${r.port}`);
        await env.DB.batch(rows.map((r, i) => insert(origins[i]!, r.host, r.createdAt, r.deleted ? 10 : null)));
        for (const sql of migration()) await env.DB.prepare(sql).run();

        const stored = new Map(
          (await env.DB.prepare("SELECT origin, host FROM registry_sites").all<{ origin: string; host: string }>()).results.map((r) => [r.origin, r.host]),
        );
        expect([...stored.keys()].sort()).toEqual([...origins].sort());
        for (const host of new Set(rows.map((r) => r.host))) {
          const sharing = rows.map((r, i) => ({ ...r, origin: origins[i]! })).filter((r) => r.host === host);
          const keeper = [...sharing].sort(
            (x, y) => Number(x.deleted) - Number(y.deleted) || x.createdAt - y.createdAt || (x.origin < y.origin ? -1 : 1),
          )[0]!;
          for (const r of sharing) expect(stored.get(r.origin), r.origin).toBe(r === keeper ? host : `${host} ${r.origin}`);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("leaves a host unregistrable while a twin of it is left, its keeper purged", async () => {
    const platform = freshOrigin("platform");
    const e = siteEnv(platform);
    const host = `twin-${Math.random().toString(36).slice(2, 9)}.test`;
    await env.DB.prepare("DROP INDEX IF EXISTS registry_sites_one_per_host").run();
    await env.DB.batch([insert(`https://${host}`, host, 1, null), insert(`http://${host}`, host, 2, null)]);
    for (const sql of migration()) await env.DB.prepare(sql).run();
    // The keeper is deleted and purged (its row removed last); the twin still serves at its origin.
    await env.DB.prepare("DELETE FROM registry_sites WHERE origin = ?1").bind(`https://${host}`).run();
    expect((await register(e, platform, `https://${host}`)).status).toBe(409);
    expect((await register(e, platform, `https://${host}:8443`)).status).toBe(409);
  });
});
