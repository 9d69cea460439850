/** Entries grouped into batches of at most --batch-size records and about maxBatchBytes of NDJSON. */
import type { Entry } from "./walk.ts";

/** Rough size of a record's NDJSON line, cheap to compute (only extensions are serialised). */
function approximateBytes(input: Record<string, unknown>): number {
  const loc = input["loc"];
  let bytes = 120 + (typeof loc === "string" ? loc.length : 0);
  for (const key of ["images", "videos", "news", "alternates"]) if (input[key] !== undefined) bytes += JSON.stringify(input[key]).length;
  return bytes;
}

export class Batcher {
  readonly #maxRecords: number;
  readonly #maxBytes: number;
  #entries: Entry[] = [];
  #bytes = 0;

  constructor(maxRecords: number, maxBytes: number) {
    this.#maxRecords = maxRecords;
    this.#maxBytes = maxBytes;
  }

  get size(): number {
    return this.#entries.length;
  }

  /** Adds an entry; true when the batch is full and should be taken. */
  add(entry: Entry): boolean {
    this.#entries.push(entry);
    this.#bytes += approximateBytes(entry.input);
    return this.#entries.length >= this.#maxRecords || this.#bytes >= this.#maxBytes;
  }

  /** The entries so far (the batcher starts empty again). */
  take(): Entry[] {
    const entries = this.#entries;
    this.#entries = [];
    this.#bytes = 0;
    return entries;
  }
}
