/**
 * The regeneration's one pass over a KV site, read from the site's writer object in keyset pages:
 * the rows as committed, never a KV read that another location may see stale. So the cron renders
 * exactly what was acknowledged, whether or not the projection has reached KV yet.
 */
import type { RangeScan, ScanPosition, ScannedRecord } from "../../store/port.ts";
import { type BlockEntry, storedRecord } from "./layout.ts";
import { type ScanRow, type SiteWriters, writerOf } from "./object-protocol.ts";

/** Rows per RPC (a page also stops at a few MB of entries, site-queries.ts). */
const SCAN_PAGE_ROWS = 5_000;

export class KvObjectScan implements RangeScan {
  readonly #writers: SiteWriters;

  constructor(writers: SiteWriters) {
    this.#writers = writers;
  }

  async *scan(origin: string, from: ScanPosition, until: ScanPosition | null): AsyncIterable<ScannedRecord> {
    const writer = writerOf(this.#writers, origin);
    let position: ScanPosition | null = from;
    while (position) {
      const page: { rows: ScanRow[]; next: ScanPosition | null } = await writer.scanPage(origin, position, until, SCAN_PAGE_ROWS);
      for (const [section, , , deleted, size, kinds, entry] of page.rows) {
        yield { ...storedRecord(JSON.parse(entry) as BlockEntry, section), deleted: deleted === 1, size, extKinds: kinds };
      }
      position = page.next;
    }
  }
}
