/**
 * Input formats → items: CSV, NDJSON, plain text (one URL per line) and sitemap XML. Every item
 * carries the line it starts on. A line that cannot become a record is an item with `error`; a
 * file that cannot be read on (broken XML structure, a CSV header with unknown columns) throws
 * InputError.
 */
import { InputError, type Opened, lines, texts } from "./input.ts";
import { type DroppedHandler, SitemapXmlReader } from "./sitemap-xml.ts";
import { XmlError } from "./xml.ts";

export const FORMATS = ["csv", "ndjson", "text", "xml"] as const;
export type Format = (typeof FORMATS)[number];

export interface Item {
  line: number;
  input?: Record<string, unknown>;
  /** Why this line is not a record. */
  error?: string;
  /** Set for a sitemap index entry: the shard's loc. */
  sitemap?: string;
}

/** Format from the name (`.gz` stripped), else sniffed from the first bytes. */
export function detectFormat(name: string, head: Uint8Array): Format {
  const path = name.replace(/[?#].*$/, "").toLowerCase().replace(/\.gz$/, "");
  if (path.endsWith(".xml")) return "xml";
  if (path.endsWith(".csv") || path.endsWith(".tsv")) return "csv";
  if (path.endsWith(".ndjson") || path.endsWith(".jsonl")) return "ndjson";
  if (path.endsWith(".txt")) return "text";
  const start = new TextDecoder().decode(head.subarray(0, 4096)).replace(/^\uFEFF/, "");
  const first = start.trimStart()[0];
  if (first === "<") return "xml";
  if (first === "{" || first === '"') return "ndjson";
  const firstLine = start.split(/\r?\n/, 1)[0] ?? "";
  if (/^\s*"?(loc|url)"?\s*[,;\t]/i.test(firstLine)) return "csv";
  return "text";
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function* readText(opened: Opened): AsyncGenerator<Item> {
  for await (const { line, text, error } of lines(opened.bytes)) {
    if (error !== undefined) {
      yield { line, error };
      continue;
    }
    const loc = text!.trim();
    if (loc !== "") yield { line, input: { loc } };
  }
}

async function* readNdjson(opened: Opened): AsyncGenerator<Item> {
  for await (const { line, text, error } of lines(opened.bytes)) {
    if (error !== undefined) {
      yield { line, error };
      continue;
    }
    if (text!.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(text!);
    } catch (err) {
      yield { line, error: `not valid JSON: ${(err as Error).message.replace(/ in JSON at position.*$/s, "")}` };
      continue;
    }
    if (typeof value === "string") yield { line, input: { loc: value } };
    else if (isPlainObject(value)) yield { line, input: value };
    else yield { line, error: "each line must be a JSON object (a record) or a JSON string (a URL)" };
  }
}

const CSV_COLUMNS: Readonly<Record<string, string>> = {
  loc: "loc",
  url: "loc",
  lastmod: "lastmod",
  last_modified: "lastmod",
  "last-modified": "lastmod",
  changefreq: "changefreq",
  priority: "priority",
  section: "section",
};
const POSITIONAL = ["loc", "lastmod", "changefreq", "priority", "section"];
/** A quoted field may span lines, but not without end. */
const MAX_CSV_RECORD_CHARS = 1 << 20;

/** Fields of one CSV record, or null while a quoted field is still open (more lines needed). */
export function parseCsvRecord(text: string, delimiter: string): string[] | null | { error: string } {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (text[i] === '"') {
      let value = "";
      let j = i + 1;
      for (;;) {
        const q = text.indexOf('"', j);
        if (q === -1) return null;
        value += text.slice(j, q);
        if (text[q + 1] === '"') {
          value += '"';
          j = q + 2;
          continue;
        }
        j = q + 1;
        break;
      }
      fields.push(value);
      if (j === text.length) return fields;
      if (text[j] !== delimiter) return { error: `unexpected ${JSON.stringify(text[j])} after a quoted field` };
      i = j + 1;
    } else {
      const end = text.indexOf(delimiter, i);
      const value = end === -1 ? text.slice(i) : text.slice(i, end);
      if (value.includes('"')) return { error: 'a field with a quote (") must be quoted, with the quote doubled ("")' };
      fields.push(value);
      if (end === -1) return fields;
      i = end + 1;
    }
  }
}

function csvDelimiter(header: string): string {
  const counts = [",", "\t", ";"].map((d) => [d, header.split(d).length - 1] as const);
  counts.sort((a, b) => b[1] - a[1]);
  return counts[0]![1] > 0 ? counts[0]![0] : ",";
}

async function* readCsv(opened: Opened): AsyncGenerator<Item> {
  let columns: string[] | null = null;
  let delimiter: string | null = null;
  let record = "";
  let recordLine = 0;
  for await (const { line, text, error } of lines(opened.bytes)) {
    if (error !== undefined) {
      record = "";
      yield { line, error };
      continue;
    }
    if (record === "") {
      if (text!.trim() === "") continue;
      recordLine = line;
      record = text!;
    } else {
      record += `\n${text!}`;
      if (record.length > MAX_CSV_RECORD_CHARS) {
        record = "";
        yield { line: recordLine, error: "unterminated quoted field" };
        continue;
      }
    }
    delimiter ??= csvDelimiter(record);
    const parsed = parseCsvRecord(record, delimiter);
    if (parsed === null) continue;
    record = "";
    if (!Array.isArray(parsed)) {
      yield { line: recordLine, error: parsed.error };
      continue;
    }
    if (columns === null) {
      const names = parsed.map((f) => f.trim().toLowerCase());
      if (names.some((n) => CSV_COLUMNS[n] === "loc")) {
        const unknown = names.filter((n) => CSV_COLUMNS[n] === undefined);
        if (unknown.length > 0) {
          throw new InputError(
            `${opened.name}:${recordLine}: CSV column ${unknown.map((u) => JSON.stringify(u)).join(", ")} is not a record field (columns: loc or url, lastmod, changefreq, priority, section)`,
          );
        }
        columns = names.map((n) => CSV_COLUMNS[n]!);
        continue;
      }
      columns = POSITIONAL;
    }
    if (parsed.length > columns.length) {
      yield { line: recordLine, error: `${parsed.length} fields, but there are only ${columns.length} columns (${columns.join(", ")})` };
      continue;
    }
    const input: Record<string, unknown> = {};
    parsed.forEach((value, i) => {
      input[columns![i]!] = columns![i] === "loc" ? value.trim() : value;
    });
    yield { line: recordLine, input };
  }
  if (record !== "") yield { line: recordLine, error: "unterminated quoted field at the end of the file" };
}

async function* readXml(opened: Opened, dropped: DroppedHandler): AsyncGenerator<Item> {
  const reader = new SitemapXmlReader(dropped);
  const toItems = (items: ReturnType<SitemapXmlReader["feed"]>): Item[] =>
    items.map((i) => {
      const item: Item = i.kind === "record" ? { line: i.line, input: i.input } : { line: i.line, sitemap: i.loc };
      if (i.error !== undefined) item.error = i.error;
      return item;
    });
  try {
    for await (const text of texts(opened.bytes, () => `${opened.name}:${reader.line}`)) yield* toItems(reader.feed(text));
    yield* toItems(reader.end());
  } catch (err) {
    if (err instanceof XmlError) throw new InputError(`${opened.name}: ${err.message}`);
    throw err;
  }
}

/** Items of one input (a sitemap index yields `sitemap` items, which the caller follows). */
export function readItems(opened: Opened, format: Format, dropped: DroppedHandler): AsyncGenerator<Item> {
  switch (format) {
    case "csv":
      return readCsv(opened);
    case "ndjson":
      return readNdjson(opened);
    case "text":
      return readText(opened);
    case "xml":
      return readXml(opened, dropped);
  }
}
