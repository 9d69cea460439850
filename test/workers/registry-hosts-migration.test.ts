/**
 * Migration 0026: each registered site's row keeps its host as the registration compares it
 * (src/registry/own-host.ts siteHost: URL.hostname, no port, no trailing dot), backfilled in SQL
 * from origins stored before it: names, a trailing dot, ports, IPv4 and IPv6 addresses. The
 * migration's own statements, run against rows set up as before it (the column cleared).
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { expect, it } from "vitest";
import { siteHost } from "../../src/registry/own-host.ts";

/** The migration's statements but those adding the column and the index (the test database has every migration applied). */
const backfill = (): string[] => {
  const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0026_"));
  expect(migration).toBeDefined();
  return migration!.queries.filter((q) => !/ALTER TABLE|CREATE INDEX/i.test(q));
};

const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,6}[a-z0-9]$/);
/** An origin as URL.origin gives it, as the registry stored them before 0026. */
const originArb = fc
  .record({
    scheme: fc.constantFrom("https", "http"),
    host: fc.oneof(
      fc.array(label, { minLength: 1, maxLength: 3 }).map((ls) => `${ls.join(".")}.example`),
      fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => `127.0.${a}.${b}`),
      fc.constantFrom("[::1]", "[2001:db8::1]", "localhost"),
    ),
    dot: fc.boolean(),
    port: fc.constantFrom("", ":8443", ":8787", ":443"),
  })
  .map(({ scheme, host, dot, port }) => new URL(`${scheme}://${host}${dot && !host.startsWith("[") ? "." : ""}${port}`).origin);

it("backfills each row's host as the registration compares it", async () => {
  // As the database was when 0026 ran: before 0027 made the host UNIQUE (rows may share one: test/workers/registry-hosts-unique.test.ts).
  await env.DB.prepare("DROP INDEX IF EXISTS registry_sites_one_per_host").run();
  await fc.assert(
    fc.asyncProperty(fc.uniqueArray(originArb, { minLength: 1, maxLength: 8 }), async (origins) => {
      await env.DB.prepare("DELETE FROM registry_sites").run();
      await env.DB.batch(
        origins.map((origin, i) =>
          env.DB.prepare("INSERT INTO registry_sites (origin, token_hash, created_at, updated_at, host) VALUES (?1, ?2, 0, 0, '')").bind(origin, `h${i}`),
        ),
      );
      for (const sql of backfill()) await env.DB.prepare(sql).run();
      const { results } = await env.DB.prepare("SELECT origin, host FROM registry_sites").all<{ origin: string; host: string }>();
      expect(new Map(results.map((r) => [r.origin, r.host]))).toEqual(new Map(origins.map((o) => [o, siteHost(o)])));
    }),
    { numRuns: 50 },
  );
  await env.DB.prepare("DELETE FROM registry_sites").run();
  await env.DB.prepare("CREATE UNIQUE INDEX registry_sites_one_per_host ON registry_sites (host)").run();
});
