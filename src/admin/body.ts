/**
 * Bounded reading of admin request bodies: a JSON array or NDJSON (by Content-Type), at most
 * `maxBytes` bytes and `maxRecords` records. The body is read as a stream and abandoned as soon
 * as a limit is passed. Each record is parsed as soon as its last byte arrives and handed to the
 * caller, which validates it and lets the raw value go: the body is never held whole, and neither
 * is its parsed form. A record's structure is bounded before JSON.parse sees it (record-shape.ts),
 * so no element can make the parser build millions of objects.
 *
 * Every record comes with the 1-based line where it starts, so errors (here, and the validator's
 * 422 issues) can name the line for both formats.
 */
import { AdminError } from "./errors.ts";
import { RecordShape } from "./record-shape.ts";
import type { ApiError, Limits } from "./schemas.ts";

export type BodyFormat = "json" | "ndjson";

/** Receives each record of a body in order, with the 1-based line where it starts. */
export type ItemSink = (item: unknown, line: number) => void;

/** A body that cannot be accepted (400, 413 or 415): thrown, and rendered by the app's onError. */
export class BodyError extends AdminError {
  override readonly name = "BodyError";
  declare readonly body: ApiError;
  constructor(status: 400 | 413 | 415, body: ApiError) {
    super(status, body);
  }
}

const JSON_TYPES: ReadonlySet<string> = new Set(["application/json"]);
const NDJSON_TYPES: ReadonlySet<string> = new Set([
  "application/x-ndjson",
  "application/ndjson",
  "application/jsonl",
  "application/x-jsonlines",
  "application/jsonlines",
]);

/** The body format named by a Content-Type header, or a 415 BodyError. */
export function bodyFormat(contentType: string | null | undefined): BodyFormat {
  const [media = "", ...params] = (contentType ?? "").split(";");
  const type = media.trim().toLowerCase();
  for (const param of params) {
    const [name = "", value = ""] = param.split("=");
    const charset = value.trim().replace(/^"|"$/g, "").toLowerCase();
    if (name.trim().toLowerCase() === "charset" && charset !== "utf-8" && charset !== "utf8") {
      throw new BodyError(415, { error: "unsupported_media_type", message: `charset must be utf-8, got "${charset.slice(0, 40)}"` });
    }
  }
  if (JSON_TYPES.has(type)) return "json";
  if (NDJSON_TYPES.has(type)) return "ndjson";
  throw new BodyError(415, {
    error: "unsupported_media_type",
    message: `Content-Type must be application/json (a JSON array) or application/x-ndjson (one JSON value per line), got ${type ? `"${type.slice(0, 80)}"` : "none"}`,
  });
}

function tooLarge(limits: Limits, message: string): BodyError {
  return new BodyError(413, { error: "payload_too_large", message, limits: { maxRecords: limits.maxRecords, maxBytes: limits.maxBytes } });
}

function tooManyRecords(limits: Limits): BodyError {
  return tooLarge(limits, `more than ${limits.maxRecords} records in one request; split the batch`);
}

function invalid(message: string, line?: number): BodyError {
  const body: ApiError = { error: "invalid_body", message: line === undefined ? message : `line ${line}: ${message}` };
  if (line !== undefined) body.line = line;
  return new BodyError(400, body);
}

/** JSON.parse's message, without the engine's position suffix (lines are reported separately). */
function parseMessage(err: unknown): string {
  const text = (err instanceof Error ? err.message : String(err)).replace(/ in JSON at position \d+.*$/s, "");
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** The line of a JSON.parse error inside `text`, which starts on `firstLine`. */
function errorLine(err: unknown, text: string, firstLine: number): number {
  const at = /at position (\d+)/.exec(err instanceof Error ? err.message : "");
  if (at === null) return firstLine;
  let line = firstLine;
  const end = Math.min(Number(at[1]), text.length);
  for (let nl = text.indexOf("\n"); nl !== -1 && nl < end; nl = text.indexOf("\n", nl + 1)) line++;
  return line;
}

/** Invalid UTF-8 in the body; `newlines` = line feeds in the failing chunk before the bad byte. */
class Utf8Error extends Error {
  readonly newlines: number;
  constructor(newlines: number) {
    super("body is not valid UTF-8");
    this.newlines = newlines;
  }
}

/** Offset of the first byte that does not start a well-formed UTF-8 sequence (approximate: for error lines). */
function invalidUtf8Offset(b: Uint8Array): number {
  for (let i = 0; i < b.length; ) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    const n = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    if (n === 0) return i;
    for (let k = 1; k <= n; k++) if (i + k >= b.length || (b[i + k]! & 0xc0) !== 0x80) return i;
    i += n + 1;
  }
  return b.length;
}

function countNewlines(b: Uint8Array, end: number): number {
  let n = 0;
  for (let i = b.indexOf(0x0a); i !== -1 && i < end; i = b.indexOf(0x0a, i + 1)) n++;
  return n;
}

/** Streams the body as text, enforcing maxBytes; `onText` sees each decoded piece in order. */
async function readText(request: Request, limits: Limits, onText: (text: string) => void): Promise<void> {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limits.maxBytes) {
    await request.body?.cancel().catch(() => {});
    throw tooLarge(limits, `request body is ${declared} bytes; at most ${limits.maxBytes} are accepted`);
  }
  if (request.body === null) return;
  const reader = request.body.getReader();
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  const decode = (chunk?: Uint8Array): string => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch {
      const bytes = chunk ?? new Uint8Array(0);
      throw new Utf8Error(countNewlines(bytes, invalidUtf8Offset(bytes)));
    }
  };
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (bytes > limits.maxBytes) throw tooLarge(limits, `request body is larger than ${limits.maxBytes} bytes`);
      onText(decode(value));
    }
    onText(decode());
  } catch (err) {
    await reader.cancel().catch(() => {});
    throw err;
  }
}

/**
 * Parses one record's text; the 400s name `line`. `index`: the record's place in a JSON array,
 * whose splitter already bounded its structure (null: an NDJSON line, bounded here).
 */
function parseRecord(text: string, line: number, index: number | null): unknown {
  if (index === null) {
    const shape = new RecordShape();
    if (shape.scan(text, 0) === RecordShape.OVER_LIMIT) throw invalid(`record ${shape.overLimit}`, line);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw invalid(`${index === null ? "not" : `record ${index} is not`} valid JSON: ${parseMessage(err)}`, errorLine(err, text, line));
  }
}

/**
 * NDJSON: one JSON value per line (LF or CRLF); blank lines are skipped. Parsed line by line while
 * the body streams in, so a bad line or one record too many stops reading at once.
 */
async function readNdjson(request: Request, limits: Limits, sink: ItemSink): Promise<void> {
  let count = 0;
  // The pieces of the line not yet ended. Each chunk is searched for line feeds on its own, so
  // a line of any length is scanned once and joined once: linear time, never a rescan.
  let pending: string[] = [];
  let line = 0;
  const take = (raw: string): void => {
    line += 1;
    const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (text.trim() === "") return;
    const value = parseRecord(text, line, null);
    if (count >= limits.maxRecords) throw tooManyRecords(limits);
    count += 1;
    sink(value, line);
  };
  try {
    await readText(request, limits, (text) => {
      let start = 0;
      for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
        const piece = text.slice(start, nl);
        if (pending.length === 0) take(piece);
        else {
          pending.push(piece);
          take(pending.join(""));
          pending = [];
        }
        start = nl + 1;
      }
      if (start < text.length) pending.push(text.slice(start));
    });
  } catch (err) {
    // Lines before the failing chunk are all counted already (the pending tail has no line feed).
    if (err instanceof Utf8Error) throw invalid(err.message, line + 1 + err.newlines);
    throw err;
  }
  if (pending.length > 0) take(pending.join(""));
}

/** Counts line breaks in text[from, to), from `first` (the line text starts on): positions only ever move forward. */
class LineCounter {
  readonly #text: string;
  #pos = 0;
  #line: number;
  constructor(text: string, first = 1) {
    this.#text = text;
    this.#line = first;
  }
  at(pos: number): number {
    for (let nl = this.#text.indexOf("\n", this.#pos); nl !== -1 && nl < pos; nl = this.#text.indexOf("\n", nl + 1)) {
      this.#line += 1;
    }
    this.#pos = Math.max(this.#pos, pos);
    return this.#line;
  }
}

const WHITESPACE = /[ \t\r\n]*/y;

function skipWhitespace(text: string, pos: number): number {
  WHITESPACE.lastIndex = pos;
  WHITESPACE.exec(text);
  return WHITESPACE.lastIndex;
}

/**
 * A JSON array, split into its top-level elements as the text streams in, so each is parsed on its
 * own: a syntax error names the line of the element it is in, and every record knows its line.
 * Element boundaries are found by RecordShape, which jumps between structural characters (strings
 * skipped by regular expression), carrying its state from one piece of text to the next.
 */
class JsonArraySplitter {
  readonly #limits: Limits;
  readonly #sink: ItemSink;
  /** open: before "["; first: after "["; next: after ","; element: inside one; closed: after "]". */
  #state: "open" | "first" | "next" | "element" | "closed" = "open";
  /** The pieces of the current element from earlier pieces of text. */
  #pieces: string[] = [];
  #shape = new RecordShape();
  /** Line of the current element's first character. */
  #elementLine = 1;
  /** Line where the string still open at the end of the text so far started. */
  #stringLine = 1;
  /** Line at the start of the next piece of text. */
  #line = 1;
  #count = 0;

  constructor(limits: Limits, sink: ItemSink) {
    this.#limits = limits;
    this.#sink = sink;
  }

  /** The line the next piece of text starts on (for errors found before it is split). */
  get line(): number {
    return this.#line;
  }

  push(text: string): void {
    const lines = new LineCounter(text, this.#line);
    let pos = 0;
    let elementStart = 0;
    while (pos < text.length) {
      if (this.#state === "element") {
        const end = this.#shape.scan(text, pos);
        if (end === RecordShape.OVER_LIMIT) throw invalid(`record ${this.#count} ${this.#shape.overLimit}`, this.#elementLine);
        if (end === RecordShape.UNBALANCED) throw invalid("unexpected }", lines.at(this.#shape.position));
        if (end === RecordShape.MORE) {
          if (this.#shape.stringStart >= 0) this.#stringLine = lines.at(this.#shape.stringStart);
          this.#pieces.push(text.slice(elementStart));
          break;
        }
        this.#pieces.push(text.slice(elementStart, end));
        const element = this.#pieces.join("");
        this.#pieces = [];
        this.#emit(element, text[end]!, lines.at(end));
        this.#state = text.charCodeAt(end) === 0x5d ? "closed" : "next";
        pos = end + 1;
        continue;
      }
      pos = skipWhitespace(text, pos);
      if (pos >= text.length) break;
      const c = text.charCodeAt(pos);
      if (this.#state === "open") {
        if (c !== 0x5b) throw invalid("body must be a JSON array of records ([ … ])", lines.at(pos));
        this.#state = "first";
        pos += 1;
      } else if (this.#state === "closed") {
        throw invalid("unexpected text after the closing ]", lines.at(pos));
      } else if (this.#state === "first" && c === 0x5d) {
        this.#state = "closed";
        pos += 1;
      } else if (c === 0x2c || c === 0x5d) {
        throw invalid(`missing value before "${text[pos]}"`, lines.at(pos));
      } else {
        this.#state = "element";
        this.#shape = new RecordShape();
        this.#elementLine = lines.at(pos);
        elementStart = pos;
      }
    }
    this.#line = lines.at(text.length);
  }

  end(): void {
    if (this.#state === "closed") return;
    if (this.#state === "open") throw invalid("body is empty; send a JSON array of records", this.#line);
    if (this.#state === "element" && this.#shape.inString) throw invalid("unterminated string", this.#stringLine);
    throw invalid("unexpected end of body: the array is not closed", this.#state === "element" ? this.#elementLine : this.#line);
  }

  #emit(element: string, after: string, afterLine: number): void {
    if (element.trim() === "") throw invalid(`missing value before "${after}"`, afterLine);
    const value = parseRecord(element, this.#elementLine, this.#count);
    if (this.#count >= this.#limits.maxRecords) throw tooManyRecords(this.#limits);
    this.#count += 1;
    this.#sink(value, this.#elementLine);
  }
}

/**
 * Reads a batch body and hands each record to `sink` as soon as it is complete: 415 for another
 * Content-Type, 413 past the limits, 400 naming the bad line. Nothing of the body is kept.
 */
export async function readBatch(request: Request, limits: Limits, sink: ItemSink): Promise<BodyFormat> {
  const format = bodyFormat(request.headers.get("content-type"));
  if (format === "ndjson") {
    await readNdjson(request, limits, sink);
    return format;
  }
  const splitter = new JsonArraySplitter(limits, sink);
  try {
    await readText(request, limits, (text) => splitter.push(text));
  } catch (err) {
    if (err instanceof Utf8Error) throw invalid(err.message, splitter.line + err.newlines);
    throw err;
  }
  splitter.end();
  return format;
}
