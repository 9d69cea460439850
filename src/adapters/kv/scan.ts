/** The regeneration's one pass over KV: every record of a span in (section, key) order, content resolved. */
import type { RangeScan, ScanPosition, ScannedRecord } from "../../store/port.ts";
import { allBlockNames, chunked, fetchAhead, withOverflow } from "./blocks.ts";
import { BLOCK_SPAN, type NamedBlock, entryKinds, entrySize, parseBlock, parseBlockName, storedRecord } from "./layout.ts";
import { BLOCKS_PER_GET, WALK_BYTES_PER_GET } from "./reader.ts";

/** (section, key) order, as D1 sorts (byte order of ASCII section names). */
function before(section: string, key: number, position: ScanPosition): boolean {
  return section < position.section || (section === position.section && key < position.key);
}

export class KvRangeScan implements RangeScan {
  readonly #kv: KVNamespace;
  readonly #blocksPerGet: number;

  constructor(kv: KVNamespace, blocksPerGet = BLOCKS_PER_GET) {
    this.#kv = kv;
    this.#blocksPerGet = blocksPerGet;
  }

  /**
   * Every record from `from` to `until` (inclusive), tombstones included, content resolved for
   * live ones. Lists the site's block names (one list() per 1,000 blocks, i.e. per 1,000,000
   * records) and bulk-gets only the blocks that overlap the span.
   */
  async *scan(origin: string, from: ScanPosition, until: ScanPosition | null): AsyncIterable<ScannedRecord> {
    const wanted = async function* (pages: AsyncIterable<NamedBlock[]>): AsyncGenerator<NamedBlock[]> {
      for await (const page of pages) {
        const keep: NamedBlock[] = [];
        for (const block of page) {
          const { section, block: n } = parseBlockName(block.name, origin);
          if (before(section, (n + 1) * BLOCK_SPAN - 1, from)) continue;
          if (until && before(until.section, until.key, { section, key: n * BLOCK_SPAN })) {
            if (keep.length > 0) yield keep;
            return;
          }
          keep.push(block);
        }
        if (keep.length > 0) yield keep;
      }
    };
    for await (const blocks of fetchAhead(this.#kv, chunked(wanted(allBlockNames(this.#kv, origin)), this.#blocksPerGet, WALK_BYTES_PER_GET))) {
      for (const { name, text } of blocks) {
        if (text === null) continue;
        const { section, block } = parseBlockName(name, origin);
        const inSpan = parseBlock(text, name, block).filter(
          (e) => !before(section, e.k, from) && !(until && before(until.section, until.key, { section, key: e.k })),
        );
        const live = await withOverflow(
          this.#kv,
          origin,
          section,
          inSpan.filter((e) => e.d !== 1),
        );
        const full = new Map(live.map((e) => [e.k, e]));
        for (const entry of inSpan) {
          const e = full.get(entry.k) ?? entry;
          yield { ...storedRecord(e, section), deleted: entry.d === 1, size: entrySize(entry), extKinds: entryKinds(entry) };
        }
      }
    }
  }
}
