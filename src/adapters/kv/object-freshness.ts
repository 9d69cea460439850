/**
 * Whether a shard's rows moved past its manifest's version, asked of the site's writer object (its
 * SQLite holds the rows as committed, and the change index answers from the changes since the
 * stamp alone). One RPC per live render, before its first byte: a render whose rows moved on goes
 * out without validators (src/http/cache/serve.ts), as on D1. What it cannot tell, a KV copy behind
 * those rows, the render checks itself (src/manifest/version-check.ts; docs/kv.md).
 */
import type { RangeFreshness, ShardRange } from "../../store/port.ts";
import { type SiteWriters, writerOf } from "./object-protocol.ts";

export class KvObjectFreshness implements RangeFreshness {
  readonly #writers: SiteWriters;

  constructor(writers: SiteWriters) {
    this.#writers = writers;
  }

  changedAfter(range: ShardRange, stamp: number): Promise<boolean> {
    return writerOf(this.#writers, range.origin).changedAfter(range.origin, range.section, range.firstKey, range.lastKey, stamp);
  }
}
