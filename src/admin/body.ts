/**
 * Bounded reading of admin request bodies: a JSON array or NDJSON (by Content-Type), at most
 * `maxBytes` bytes and `maxRecords` records. The body is read as a stream and abandoned as soon
 * as a limit is passed, so an oversized upload costs at most `maxBytes` of memory.
 *
 * Every record comes with the 1-based line where it starts, so errors (here, and the validator's
 * 422 issues) can name the line for both formats.
 */
import { AdminError } from "./errors.ts";
import type { ApiError, Limits } from "./schemas.ts";

export type BodyFormat = "json" | "ndjson";

export interface ParsedBody {
  format: BodyFormat;
  items: unknown[];
  /** lines[i]: 1-based body line where item i starts. */
  lines: number[];
}

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
 * NDJSON: one JSON value per line (LF or CRLF); blank lines are skipped. Parsed line by line while
 * the body streams in, so a bad line or one record too many stops reading at once.
 */
async function readNdjson(request: Request, limits: Limits): Promise<ParsedBody> {
  const items: unknown[] = [];
  const lines: number[] = [];
  // The pieces of the line not yet ended. Each chunk is searched for line feeds on its own, so
  // a line of any length is scanned once and joined once: linear time, never a rescan.
  let pending: string[] = [];
  let line = 0;
  const take = (raw: string): void => {
    line += 1;
    const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw invalid(`not valid JSON: ${parseMessage(err)}`, line);
    }
    if (items.length >= limits.maxRecords) throw tooManyRecords(limits);
    items.push(value);
    lines.push(line);
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
  return { format: "ndjson", items, lines };
}

/** Counts line breaks in text[from, to): positions only ever move forward. */
class LineCounter {
  readonly #text: string;
  #pos = 0;
  #line = 1;
  constructor(text: string) {
    this.#text = text;
  }
  at(pos: number): number {
    for (let nl = this.#text.indexOf("\n", this.#pos); nl !== -1 && nl < pos; nl = this.#text.indexOf("\n", nl + 1)) {
      this.#line += 1;
    }
    this.#pos = pos;
    return this.#line;
  }
}

const STRUCTURAL = /[[\]{}",]/g;
const WHITESPACE = /[ \t\r\n]*/y;

/** End of the JSON string starting at `quote` (index after the closing quote), or -1. */
function stringEnd(text: string, quote: number): number {
  let i = quote + 1;
  for (;;) {
    const q = text.indexOf('"', i);
    if (q === -1) return -1;
    let backslashes = 0;
    for (let j = q - 1; j > quote && text.charCodeAt(j) === 0x5c; j--) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

function skipWhitespace(text: string, pos: number): number {
  WHITESPACE.lastIndex = pos;
  WHITESPACE.exec(text);
  return WHITESPACE.lastIndex;
}

/**
 * A JSON array, split into its top-level elements so each is parsed on its own: a syntax error
 * names the line of the element it is in, and every record knows its line. Element boundaries are
 * found by jumping between structural characters (strings skipped with indexOf), not per character.
 */
function splitJsonArray(text: string, limits: Limits): ParsedBody {
  const items: unknown[] = [];
  const lines: number[] = [];
  const counter = new LineCounter(text);
  let pos = skipWhitespace(text, 0);
  if (text.charCodeAt(pos) !== 0x5b) {
    if (pos >= text.length) throw invalid("body is empty; send a JSON array of records", counter.at(pos));
    throw invalid("body must be a JSON array of records ([ … ])", counter.at(pos));
  }
  pos = skipWhitespace(text, pos + 1);
  if (text.charCodeAt(pos) === 0x5d) {
    const end = skipWhitespace(text, pos + 1);
    if (end < text.length) throw invalid("unexpected text after the closing ]", counter.at(end));
    return { format: "json", items, lines };
  }
  for (;;) {
    const start = pos;
    let depth = 0;
    let end = -1;
    STRUCTURAL.lastIndex = start;
    for (let m = STRUCTURAL.exec(text); m !== null; m = STRUCTURAL.exec(text)) {
      const c = text.charCodeAt(m.index);
      if (c === 0x22) {
        const after = stringEnd(text, m.index);
        if (after === -1) throw invalid("unterminated string", counter.at(m.index));
        STRUCTURAL.lastIndex = after;
      } else if (c === 0x7b || c === 0x5b) {
        depth++;
      } else if (c === 0x7d || (c === 0x5d && depth > 0)) {
        depth--;
        if (depth < 0) throw invalid("unexpected }", counter.at(m.index));
      } else if (depth === 0) {
        end = m.index; // "," or the array's closing "]"
        break;
      }
    }
    const line = counter.at(start);
    if (end === -1) throw invalid("unexpected end of body: the array is not closed", line);
    const element = text.slice(start, end);
    if (element.trim() === "") throw invalid(`missing value before "${text[end]}"`, counter.at(end));
    let value: unknown;
    try {
      value = JSON.parse(element);
    } catch (err) {
      throw invalid(`record ${items.length} is not valid JSON: ${parseMessage(err)}`, errorLine(err, element, line));
    }
    if (items.length >= limits.maxRecords) throw tooManyRecords(limits);
    items.push(value);
    lines.push(line);
    if (text.charCodeAt(end) === 0x5d) {
      const after = skipWhitespace(text, end + 1);
      if (after < text.length) throw invalid("unexpected text after the closing ]", counter.at(after));
      return { format: "json", items, lines };
    }
    pos = skipWhitespace(text, end + 1);
  }
}

/** Reads a batch body: 415 for another Content-Type, 413 past the limits, 400 naming the bad line. */
export async function readBatch(request: Request, limits: Limits): Promise<ParsedBody> {
  const format = bodyFormat(request.headers.get("content-type"));
  if (format === "ndjson") return readNdjson(request, limits);
  const parts: string[] = [];
  try {
    await readText(request, limits, (text) => {
      if (text !== "") parts.push(text);
    });
  } catch (err) {
    if (err instanceof Utf8Error) {
      const before = parts.join("");
      throw invalid(err.message, new LineCounter(before).at(before.length) + err.newlines);
    }
    throw err;
  }
  return splitJsonArray(parts.join(""), limits);
}
