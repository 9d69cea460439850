/**
 * A least-recently-used map bounded in bytes, each entry weighed by its caller: what an isolate
 * keeps per site (a registered site's whole record, its wired services) stays under a stated number
 * of bytes whatever the number of sites or the size of their settings. An entry heavier than the
 * whole budget is not kept.
 */
export class ByteLru<V> {
  readonly #budget: number;
  readonly #entries = new Map<string, { value: V; bytes: number }>();
  #bytes = 0;

  constructor(budget: number) {
    this.#budget = budget;
  }

  /** The value at `key`, now the most recently used; undefined when not kept. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` as `bytes` heavy, dropping the least recently used until the whole fits. */
  set(key: string, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.#budget) return;
    while (this.#bytes + bytes > this.#budget) this.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  /** The weight of what is kept (≤ the budget). */
  get bytes(): number {
    return this.#bytes;
  }
}
