/**
 * The newest changes of a KV site, bounded, answered by its writer object (sample-query.ts: one
 * read of at most `limit` rows whatever the site's size).
 */
import type { ChangeSample, SampledRecord } from "../../store/port.ts";
import { type SiteWriters, writerOf } from "./object-protocol.ts";

export class KvObjectChangeSample implements ChangeSample {
  readonly #writers: SiteWriters;

  constructor(writers: SiteWriters) {
    this.#writers = writers;
  }

  newest(origin: string, limit: number): Promise<SampledRecord[]> {
    return writerOf(this.#writers, origin).sample(origin, limit);
  }
}
