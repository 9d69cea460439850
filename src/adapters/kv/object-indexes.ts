/**
 * News sitemaps and the Atom feed of recent changes on the KV source: indexes the writer object
 * keeps in its SQLite (news publication time, change stamp), as D1 keeps them in its table.
 */
import type { StoredRecord } from "../../core/types.ts";
import type { NewsIndex, NewsStats, RecentIndex } from "../../store/port.ts";
import { type SiteWriters, writerOf } from "./object-protocol.ts";

export class KvObjectNewsIndex implements NewsIndex {
  readonly #writers: SiteWriters;

  constructor(writers: SiteWriters) {
    this.#writers = writers;
  }

  stats(origin: string, sinceMs: number, untilMs: number): Promise<NewsStats> {
    return writerOf(this.#writers, origin).newsStats(origin, sinceMs, untilMs);
  }

  records(origin: string, sinceMs: number, untilMs: number, offset: number, limit: number): Promise<StoredRecord[]> {
    return writerOf(this.#writers, origin).newsRecords(origin, sinceMs, untilMs, offset, limit);
  }
}

export class KvObjectRecentIndex implements RecentIndex {
  readonly #writers: SiteWriters;

  constructor(writers: SiteWriters) {
    this.#writers = writers;
  }

  records(origin: string, limit: number): Promise<StoredRecord[]> {
    return writerOf(this.#writers, origin).recent(origin, limit);
  }
}
