/**
 * The KV change feed. KV has no index on change stamps, so every read walks the whole site: one
 * list() per 1,000 blocks and one bulk get per few blocks (~250 operations per 1,000,000 records),
 * keeping only the `limit` oldest changes past the cursor in memory. Honest but not cheap (see
 * docs/kv.md): regeneration on KV re-plans by walking key rows instead (`indexed: false`), and
 * notification reads it once per batch it sends.
 *
 * A record that moved section leaves no row in the section it left (the writer removes it), so
 * this feed has no `moved` rows; `moveSeq` is passed through unchanged.
 */
import type { Change, ChangeCursor, ChangeFeed, ChangePage, ChangeStamp } from "../../store/port.ts";
import { allBlockNames, chunked, fetchAhead } from "./blocks.ts";
import { entryKinds, entrySize, parseBlock, parseBlockName } from "./layout.ts";
import { BLOCKS_PER_GET, WALK_BYTES_PER_GET } from "./reader.ts";

const isAfter = (stamp: number, key: number, c: ChangeStamp): boolean => stamp > c.stamp || (stamp === c.stamp && key > c.key);
const byChange = (a: Change, b: Change): number => a.updatedAt - b.updatedAt || a.key - b.key;

export class KvChangeFeed implements ChangeFeed {
  readonly indexed = false;
  readonly #kv: KVNamespace;
  readonly #blocksPerGet: number;

  constructor(kv: KVNamespace, blocksPerGet = BLOCKS_PER_GET) {
    this.#kv = kv;
    this.#blocksPerGet = blocksPerGet;
  }

  /** Every entry of a site, as a change (tombstones included). */
  async *#walk(origin: string): AsyncGenerator<Change> {
    for await (const blocks of fetchAhead(this.#kv, chunked(allBlockNames(this.#kv, origin), this.#blocksPerGet, WALK_BYTES_PER_GET))) {
      for (const { name, text } of blocks) {
        if (text === null) continue;
        const { section, block } = parseBlockName(name, origin);
        for (const e of parseBlock(text, name, block)) {
          yield {
            section,
            key: e.k,
            loc: e.loc,
            updatedAt: e.u,
            deleted: e.d === 1,
            size: entrySize(e),
            extKinds: entryKinds(e),
            moved: false,
          };
        }
      }
    }
  }

  async changes(origin: string, after: ChangeCursor | null, limit: number, until = Number.MAX_SAFE_INTEGER): Promise<ChangePage> {
    if (after === null) {
      const head = await this.newest(origin, Number.MAX_SAFE_INTEGER);
      return { rows: [], cursor: { stamp: head?.stamp ?? 0, key: Number.MAX_SAFE_INTEGER, moveSeq: 0 }, done: true };
    }
    // The `limit` oldest changes past the cursor: trimmed whenever twice that many are held.
    let rows: Change[] = [];
    let more = false;
    for await (const change of this.#walk(origin)) {
      if (change.updatedAt > until || !isAfter(change.updatedAt, change.key, after)) continue;
      rows.push(change);
      if (rows.length >= 2 * Math.max(limit, 1)) {
        rows = rows.sort(byChange).slice(0, limit);
        more = true;
      }
    }
    rows.sort(byChange);
    if (rows.length > limit) {
      rows = rows.slice(0, limit);
      more = true;
    }
    const last = rows[rows.length - 1];
    return {
      rows,
      cursor: last ? { stamp: last.updatedAt, key: last.key, moveSeq: after.moveSeq } : after,
      done: !more,
    };
  }

  async newest(origin: string, until: number): Promise<ChangeStamp | null> {
    let newest: ChangeStamp | null = null;
    for await (const change of this.#walk(origin)) {
      if (change.updatedAt > until) continue;
      if (newest === null || isAfter(change.updatedAt, change.key, newest)) newest = { stamp: change.updatedAt, key: change.key };
    }
    return newest;
  }

  async pending(origin: string, after: ChangeStamp): Promise<number> {
    let n = 0;
    for await (const change of this.#walk(origin)) if (isAfter(change.updatedAt, change.key, after)) n++;
    return n;
  }
}
