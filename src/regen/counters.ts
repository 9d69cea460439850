/** What a run counts as it goes, copied into its summary (src/regen/summary.ts `countInto`). */
export interface RunCounters {
  /** Shards whose rows were read (planned and rendered). */
  shardsChecked: number;
  /** Shards rendered into a new snapshot. */
  shardsRendered: number;
  /** Shards whose version turned out unchanged (snapshot already stored). */
  shardsUnchanged: number;
  /** Renders repeated because the first guessed the shard's extension namespaces wrong. */
  rerenders: number;
  /** Record rows read by scans and renders. */
  rowsRead: number;
  /** Shards whose stored file was spliced (src/regen/splice.ts), and the blocks they re-rendered. */
  shardsSpliced: number;
  blocksRendered: number;
  /** Change feed rows read. */
  changesRead: number;
  /** gzip bytes stored (shards + index) and their uncompressed size. */
  bytesStored: number;
  xmlBytes: number;
}

export function newCounters(): RunCounters {
  return {
    shardsChecked: 0,
    shardsRendered: 0,
    shardsUnchanged: 0,
    rerenders: 0,
    shardsSpliced: 0,
    blocksRendered: 0,
    rowsRead: 0,
    changesRead: 0,
    bytesStored: 0,
    xmlBytes: 0,
  };
}
