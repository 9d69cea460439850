/**
 * What a renderer reads: items in memory, items one at a time, or items a page at a time.
 *
 * A store reads records in pages (keyset pages, KV blocks). Handing them over one by one through
 * an async iterator costs an `await` per record, which cost as much as writing the record's
 * element (BENCHMARKS.md "Overlapped cold render"); handed over as pages, a renderer awaits once
 * per page and takes the page's records synchronously.
 */
export type Source<T> = Iterable<T> | AsyncIterable<T> | Paged<T>;

/** Items a page at a time. A wrapper, because an async iterable of arrays is not told apart at run time. */
export interface Paged<T> {
  readonly pages: AsyncIterable<readonly T[]>;
}

export function paged<T>(pages: AsyncIterable<readonly T[]>): Paged<T> {
  return { pages };
}

function isPaged<T>(source: Source<T>): source is Paged<T> {
  return "pages" in source;
}

/**
 * Reads a source item by item. `next()` answers synchronously while a sync source or the current
 * page has items and returns a promise only when it must wait, so a caller awaits only then.
 */
export class SourceReader<T> {
  readonly #sync: Iterator<T> | null = null;
  readonly #async: AsyncIterator<T> | null = null;
  readonly #pages: AsyncIterator<readonly T[]> | null = null;
  #page: readonly T[] = [];
  #at = 0;

  constructor(source: Source<T>) {
    if (isPaged(source)) this.#pages = source.pages[Symbol.asyncIterator]();
    else if (Symbol.asyncIterator in source) this.#async = source[Symbol.asyncIterator]();
    else this.#sync = source[Symbol.iterator]();
  }

  next(): IteratorResult<T> | Promise<IteratorResult<T>> {
    if (this.#sync) return this.#sync.next();
    if (this.#async) return this.#async.next();
    if (this.#at < this.#page.length) return { done: false, value: this.#page[this.#at++]! };
    return this.#nextPage();
  }

  async #nextPage(): Promise<IteratorResult<T>> {
    for (;;) {
      const page = await this.#pages!.next();
      if (page.done) return { done: true, value: undefined };
      if (page.value.length === 0) continue;
      this.#page = page.value;
      this.#at = 1;
      return { done: false, value: page.value[0]! };
    }
  }

  /** Stops the source early (a consumer that went away): its reads ahead are abandoned. */
  async return(): Promise<void> {
    await (this.#async ?? this.#pages)?.return?.();
    this.#sync?.return?.();
  }
}

/** The source's items one at a time, for a consumer off the hot path (the browser view). */
export async function* eachItem<T>(source: Source<T>): AsyncGenerator<T> {
  const reader = new SourceReader(source);
  try {
    for (;;) {
      const read = reader.next();
      const next = read instanceof Promise ? await read : read;
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await reader.return();
  }
}
