/**
 * The KV store's change feed, answered by each site's writer object from its SQLite: an index on
 * (stamp, key), stamps given when a batch commits (never behind a cursor that has passed the site's
 * newest change), section moves as `moved` rows. Indexed like D1's, so regeneration plans from it
 * and a read costs the changes it returns, not the site.
 */
import type { ChangeCursor, ChangeFeed, ChangePage, ChangeStamp } from "../../store/port.ts";
import { type SiteWriters, writerOf } from "./object-protocol.ts";

export class KvObjectChangeFeed implements ChangeFeed {
  readonly indexed = true;
  readonly #writers: SiteWriters;

  constructor(writers: SiteWriters) {
    this.#writers = writers;
  }

  changes(origin: string, after: ChangeCursor | null, limit: number, until = Number.MAX_SAFE_INTEGER): Promise<ChangePage> {
    return writerOf(this.#writers, origin).changes(origin, after, limit, until);
  }

  newest(origin: string, until: number): Promise<ChangeStamp | null> {
    return writerOf(this.#writers, origin).newest(origin, until);
  }

  pending(origin: string, after: ChangeStamp): Promise<number> {
    return writerOf(this.#writers, origin).pending(origin, after);
  }
}
