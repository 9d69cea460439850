/**
 * The simulation's reference model (issue 49, item 8): a plain map of what the site acknowledged.
 * A write answered 200 is stored, with its value; a write answered anything else may or may not be
 * (its loc becomes uncertain until the next acknowledged write of it). A committed sync removes every
 * loc it did not see whose last acknowledged write came before the sync was opened.
 */
export interface OpenSync {
  id: string;
  /** The model's step when the sync was opened: writes acknowledged after it are not the sync's to delete. */
  openedAt: number;
  seen: Set<string>;
}

export class Model {
  /** loc → its last acknowledged lastmod. */
  readonly live = new Map<string, string>();
  /** loc → the step of its last acknowledged write (PUT, DELETE or sync batch). */
  readonly writtenAt = new Map<string, number>();
  /** Locs whose last write was not acknowledged: either value (or absence) is right. */
  readonly uncertain = new Set<string>();
  /** Locs a committed sync removed (and nothing wrote since). */
  readonly droppedBySync = new Set<string>();
  readonly syncs: OpenSync[] = [];
  #step = 0;

  tick(): number {
    return ++this.#step;
  }

  put(loc: string, lastmod: string): void {
    this.live.set(loc, lastmod);
    this.#written(loc);
  }

  delete(loc: string): void {
    this.live.delete(loc);
    this.#written(loc);
  }

  unknown(loc: string): void {
    this.uncertain.add(loc);
    this.droppedBySync.delete(loc);
  }

  #written(loc: string): void {
    this.writtenAt.set(loc, this.#step);
    this.uncertain.delete(loc);
    this.droppedBySync.delete(loc);
  }

  /** What committing `sync` removes: live (or uncertain) locs it did not see, last written before it opened. */
  wouldDelete(sync: OpenSync): string[] {
    const candidates = new Set([...this.live.keys(), ...this.uncertain]);
    return [...candidates].filter((loc) => !sync.seen.has(loc) && (this.writtenAt.get(loc) ?? 0) < sync.openedAt);
  }

  commit(sync: OpenSync): void {
    for (const loc of this.wouldDelete(sync)) {
      this.live.delete(loc);
      this.uncertain.delete(loc);
      this.droppedBySync.add(loc);
    }
    this.close(sync);
  }

  close(sync: OpenSync): void {
    this.syncs.splice(this.syncs.indexOf(sync), 1);
  }
}
