/**
 * A loc-index bucket kept as the text KV holds, never parsed whole: a bucket is ~40 bytes per
 * record of its site over 256 buckets (~1.5 MB each at 10,000,000 records), and parsed into an
 * object it takes 3.5–3.8 times its text, so a batch that touches many buckets would spend most
 * of a Worker's 128 MB on them. A lookup finds one entry in the text; edits wait in a map and are
 * spliced in once, when the bucket is written.
 *
 * Text: `{"<16 hex digit id>":[key,"section",…],…}` (JSON.stringify of an object). An id is quoted
 * hex followed by `:`, which no value can contain (keys are numbers, sections match SECTION_PATTERN).
 */
import { KvLayoutError } from "./layout.ts";

/** The flat (key, section) list stored under one hash id; normally one pair. */
export type IndexValue = (number | string)[];

interface Span {
  /** Index of the entry's `"` (start of `"id":`). */
  start: number;
  /** Index of its value's `[`. */
  value: number;
  /** Index just past its value's `]`. */
  end: number;
}

export class IndexBucket {
  readonly #name: string;
  readonly #text: string;
  readonly #edits = new Map<string, IndexValue>();

  /** `name` is the KV key (for errors); `text` is its value, or null when the bucket is absent. */
  constructor(name: string, text: string | null) {
    const trimmed = text?.trim() ?? "{}";
    if (!trimmed.startsWith("{") || !trimmed.endsWith("}")) throw new KvLayoutError(name, "loc-index bucket is not a JSON object");
    this.#name = name;
    this.#text = trimmed;
  }

  get dirty(): boolean {
    return this.#edits.size > 0;
  }

  get(id: string): IndexValue | undefined {
    const edited = this.#edits.get(id);
    if (edited) return edited;
    const span = this.#find(id);
    if (!span) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(this.#text.slice(span.value, span.end));
    } catch {
      throw new KvLayoutError(this.#name, `loc-index entry "${id}" is not JSON`);
    }
    if (!Array.isArray(value)) throw new KvLayoutError(this.#name, `loc-index entry "${id}" is not a list`);
    return value as IndexValue;
  }

  set(id: string, value: IndexValue): void {
    if (JSON.stringify(this.get(id) ?? []) === JSON.stringify(value)) return;
    this.#edits.set(id, value);
  }

  /** The bucket's text with every edit applied: one pass over the stored text. */
  text(): string {
    if (this.#edits.size === 0) return this.#text;
    const replaced: (Span & { id: string })[] = [];
    const added: string[] = [];
    for (const id of this.#edits.keys()) {
      const span = this.#find(id);
      if (span) replaced.push({ ...span, id });
      else added.push(id);
    }
    replaced.sort((a, b) => a.start - b.start);
    const parts: string[] = [];
    let at = 0;
    for (const r of replaced) {
      parts.push(this.#text.slice(at, r.start), entryText(r.id, this.#edits.get(r.id)!));
      at = r.end;
    }
    parts.push(this.#text.slice(at, -1));
    const hadEntries = !/^\{\s*\}$/.test(this.#text);
    for (const [i, id] of added.entries()) parts.push(hadEntries || i > 0 ? "," : "", entryText(id, this.#edits.get(id)!));
    parts.push("}");
    return parts.join("");
  }

  #find(id: string): Span | undefined {
    const key = `"${id}":`;
    const start = this.#text.indexOf(key);
    if (start < 0) return undefined;
    const close = this.#text.indexOf("]", start);
    if (close < 0) throw new KvLayoutError(this.#name, `loc-index entry "${id}" has no closing "]"`);
    return { start, value: start + key.length, end: close + 1 };
  }
}

const entryText = (id: string, value: IndexValue): string => `"${id}":${JSON.stringify(value)}`;
