/**
 * The newest changes of a KV site, bounded, run inside its writer object on its SQLite (site-db.ts):
 * the first `limit` entries of the index records_changed (stamp, key) read backwards, tombstones
 * included in the bound and dropped, so one call reads at most `limit` rows whatever the site's size.
 */
import type { SampledRecord } from "../../store/port.ts";
import type { SiteDb } from "./site-db.ts";

/** The most rows one call reads, whatever it asks. */
const MAX_SAMPLE = 10_000;

export function sampleNewest(db: SiteDb, limit: number): SampledRecord[] {
  if (limit <= 0) return [];
  return db.sql
    .exec<{ section: string; loc: string; stamp: number; deleted: number; lastmod: string | null }>(
      "SELECT section, loc, stamp, deleted, json_extract(entry, '$.lastmod') AS lastmod FROM records ORDER BY stamp DESC, key DESC LIMIT ?",
      Math.min(limit, MAX_SAMPLE),
    )
    .toArray()
    .flatMap((r) => (r.deleted === 1 ? [] : [{ section: r.section, loc: r.loc, lastmod: r.lastmod ?? null, updatedAt: r.stamp }]));
}
