/**
 * Migration 0024: the regeneration's and the notifications' cursors saved by stamp become commit
 * positions (issue 49) without losing a change: each starts just before the first change stamped
 * within a minute of it, rows not changed since migration 0023 (seq 0) that it may not have passed
 * numbered first; a change stamped behind it but committed after 0023 is read again. A site with
 * no rows here (KV) keeps its stamp cursors. The migration's own statements, run against a database
 * set up as one before it.
 */
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { D1ChangeFeed } from "../../src/adapters/d1/change-feed.ts";

const D1_SITE = "https://migrated.example";
const KV_SITE = "https://kv-migrated.example";
const CURSOR = 1_000_000;

/** The migration's statements, but the column it adds (the test database has every migration applied). */
const statements = (): string[] => {
  const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0024_"));
  expect(migration).toBeDefined();
  return migration!.queries.filter((q) => !/ALTER TABLE/i.test(q));
};

const row = (loc: string, stamp: number) =>
  env.DB.prepare("INSERT INTO urls (origin, section, loc, size, updated_at) VALUES (?1, 'pages', ?2, 1, ?3)").bind(D1_SITE, `${D1_SITE}/${loc}`, stamp);

it("moves stamp cursors to commit positions a minute before them, numbering the rows from before 0023 they may not have passed", async () => {
  // Before 0023: rows with seq 0, long before the cursor, within its minute, after it.
  await env.DB.batch([row("old", CURSOR - 10 * 60_000), row("within", CURSOR - 30_000), row("after", CURSOR + 5_000)]);
  await env.DB.prepare("UPDATE urls SET seq = 0 WHERE origin = ?1").bind(D1_SITE).run();
  // After 0023: one change past the cursor, and one stamped 90 s behind it (the lost change).
  await env.DB.batch([row("later", CURSOR + 20_000), row("lagging", CURSOR - 90_000)]);
  const state = {
    cursor: { stamp: CURSOR, key: 7, moveSeq: 0 },
    recent: [["pages", CURSOR, 1, 2]],
    pending: [],
    pass: null,
    fingerprint: "f",
    failed: [],
  };
  await env.DB.batch([
    env.DB.prepare("INSERT INTO regen_state (origin, state, updated_at) VALUES (?1, ?2, 0)").bind(D1_SITE, JSON.stringify(state)),
    env.DB.prepare("INSERT INTO regen_state (origin, state, updated_at) VALUES (?1, ?2, 0)").bind(KV_SITE, JSON.stringify(state)),
    env.DB.prepare("INSERT INTO notify_targets (target, origin, acked_stamp, acked_id) VALUES ('indexnow', ?1, ?2, 7)").bind(D1_SITE, CURSOR),
    env.DB.prepare("INSERT INTO notify_targets (target, origin, acked_stamp, acked_id) VALUES ('indexnow', ?1, ?2, 7)").bind(KV_SITE, CURSOR),
  ]);

  for (const sql of statements()) await env.DB.prepare(sql).run();

  const regen = new Map(
    (await env.DB.prepare("SELECT origin, state FROM regen_state").all<{ origin: string; state: string }>()).results.map((r) => [
      r.origin,
      JSON.parse(r.state),
    ]),
  );
  expect(regen.get(KV_SITE)).toEqual(state);
  const migrated = regen.get(D1_SITE);
  expect(migrated.recent).toEqual([]);
  expect(migrated.cursor).toMatchObject({ stamp: CURSOR, key: 7, moveSeq: 0, seq: expect.any(Number) });
  const acked = new Map(
    (await env.DB.prepare("SELECT origin, acked_seq FROM notify_targets").all<{ origin: string; acked_seq: number | null }>()).results.map((r) => [
      r.origin,
      r.acked_seq,
    ]),
  );
  expect(acked.get(KV_SITE)).toBeNull();
  expect(acked.get(D1_SITE)).toBe(migrated.cursor.seq);

  // Read on from the migrated cursor: everything stamped within its minute or after, the lagging change, nothing older.
  const page = await new D1ChangeFeed(env.DB).changes(D1_SITE, migrated.cursor, 100);
  expect(page.rows.map((r) => r.loc.slice(D1_SITE.length + 1)).sort()).toEqual(["after", "lagging", "later", "within"]);
  // Numbered past every change before: a commit after the migration is read after them.
  const head = await env.DB.prepare("SELECT head FROM url_sequence WHERE id = 1").first<{ head: number }>();
  expect(head?.head).toBe(page.cursor.seq);
  await row("next", 0).run();
  expect((await new D1ChangeFeed(env.DB).changes(D1_SITE, page.cursor, 100)).rows.map((r) => r.loc)).toEqual([`${D1_SITE}/next`]);
});
