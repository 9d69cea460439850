/**
 * CSV (or TSV, or ";"-separated) input → items, parsed by csv-parse as the lines stream in. The
 * delimiter is the most frequent of "," tab ";" on the first line. A first record naming a `loc`
 * column is the header; otherwise the columns are CSV_FIELDS in order. Every item carries the line
 * its record starts on; a malformed record is an item with `error` and the parsing goes on.
 */
import { type CsvError, type Info, type Parser, parse } from "csv-parse";
import { RECORD_CSV_COLUMNS } from "../../src/core/record/columns.ts";
import { type Line, lines } from "./decode.ts";
import { InputError, type Opened } from "./input.ts";
import type { Item } from "./item.ts";

/** The record fields a CSV column can fill (the declaration's scalar fields); a file without a header has them in this order. */
const CSV_FIELDS = RECORD_CSV_COLUMNS;
type CsvField = (typeof CSV_FIELDS)[number];

/** Other spellings accepted in a header. */
const HEADER_ALIASES: Readonly<Record<string, CsvField>> = { url: "loc", last_modified: "lastmod", "last-modified": "lastmod" };

/** A quoted field may span lines, but not without end. */
const MAX_CSV_RECORD_CHARS = 1 << 20;

function fieldOf(header: string): CsvField | undefined {
  return (CSV_FIELDS as readonly string[]).includes(header) ? (header as CsvField) : HEADER_ALIASES[header];
}

function acceptedColumns(): string {
  return CSV_FIELDS.map((f) => [f, ...Object.keys(HEADER_ALIASES).filter((a) => HEADER_ALIASES[a] === f)].join(" or ")).join(", ");
}

function csvDelimiter(header: string): string {
  const counts = [",", "\t", ";"].map((d) => [d, header.split(d).length - 1] as const);
  counts.sort((a, b) => b[1] - a[1]);
  return counts[0]![1] > 0 ? counts[0]![0] : ",";
}

/** csv-parse's complaint in the words of the rest of the CLI. */
function problem(err: CsvError): string {
  switch (err.code) {
    case "INVALID_OPENING_QUOTE":
      return 'a field with a quote (") must be quoted, with the quote doubled ("")';
    case "CSV_INVALID_CLOSING_QUOTE":
      return `unexpected ${JSON.stringify(/got "(.)"/.exec(err.message)?.[1] ?? "character")} after a quoted field`;
    case "CSV_QUOTE_NOT_CLOSED":
      return "unterminated quoted field at the end of the file";
    case "CSV_MAX_RECORD_SIZE":
      return "unterminated quoted field";
    default:
      return err.message.replace(/ at line \d+.*$/s, "");
  }
}

interface ParsedRecord {
  record: string[];
  raw: string;
  info: Info;
}

interface Row {
  line: number;
  fields?: string[];
  error?: string;
}

/**
 * Records with the line each starts on. After a malformed record csv-parse cannot always find the
 * next one (a stray quote opens a field to the end of the file), so parsing restarts on the next line.
 */
async function* rows(source: AsyncIterable<Line>): AsyncGenerator<Row> {
  const ready: Row[] = [];
  let parser: Parser | null = null;
  let delimiter: string | null = null;
  /** Lines before the current parser's first line. */
  let offset = 0;
  let broken = false;
  /** Non-blank lines written but not yet part of an emitted record: the first is where the next record starts. */
  const unread: number[] = [];
  const start = (before: number, sep: string): Parser => {
    const p = parse({
      delimiter: sep,
      relax_column_count: true,
      skip_records_with_error: true,
      max_record_size: MAX_CSV_RECORD_CHARS,
      raw: true,
      info: true,
    });
    const base = before;
    p.on("skip", (err: CsvError) => {
      if (p !== parser) return; // the rest of an abandoned parser
      broken = true;
      drain(); // the record before it comes first
      ready.push({ line: unread[0] ?? base + Number(err["lines"] ?? 1), error: problem(err) });
    });
    return p;
  };
  const drain = (): void => {
    for (let r = parser?.read() as ParsedRecord | null; r; r = parser?.read() as ParsedRecord | null) {
      const endLine = offset + r.info.lines;
      const startLine = endLine - (r.raw.split("\n").length - 2);
      while (unread[0] !== undefined && unread[0] <= endLine) unread.shift();
      // A blank line between records is no record.
      if (r.record.length === 1 && r.record[0]!.trim() === "") continue;
      ready.push({ line: startLine, fields: r.record });
    }
  };
  for await (const { line, text, error } of source) {
    if (parser === null && (error !== undefined || text!.trim() === "")) {
      if (error !== undefined) ready.push({ line, error });
      yield* ready.splice(0);
      continue;
    }
    delimiter ??= csvDelimiter(text!);
    if (parser === null) {
      offset = line - 1;
      parser = start(offset, delimiter);
    }
    // A line that is not UTF-8 is reported by itself; the parser sees it empty, keeping its line count.
    if (error === undefined && text!.trim() !== "") unread.push(line);
    parser.write(`${error === undefined ? text : ""}\n`);
    drain();
    if (error !== undefined) ready.push({ line, error });
    if (broken) {
      unread.length = 0;
      const done = parser;
      parser = null;
      broken = false;
      done.end();
    }
    yield* ready.splice(0);
  }
  if (parser !== null) {
    parser.end();
    drain();
    yield* ready.splice(0);
  }
}

export async function* readCsv(opened: Opened): AsyncGenerator<Item> {
  let columns: readonly CsvField[] | null = null;
  for await (const row of rows(lines(opened.bytes))) {
    if (row.fields === undefined) {
      yield { line: row.line, error: row.error! };
      continue;
    }
    if (columns === null) {
      const names = row.fields.map((f) => f.trim().toLowerCase());
      if (names.some((n) => fieldOf(n) === "loc")) {
        const unknown = names.filter((n) => fieldOf(n) === undefined);
        if (unknown.length > 0) {
          throw new InputError(
            `${opened.name}:${row.line}: CSV column ${unknown.map((u) => JSON.stringify(u)).join(", ")} is not a record field (columns: ${acceptedColumns()})`,
          );
        }
        columns = names.map((n) => fieldOf(n)!);
        continue;
      }
      columns = CSV_FIELDS;
    }
    if (row.fields.length > columns.length) {
      yield { line: row.line, error: `${row.fields.length} fields, but there are only ${columns.length} columns (${columns.join(", ")})` };
      continue;
    }
    const input: Record<string, unknown> = {};
    row.fields.forEach((value, i) => {
      input[columns![i]!] = columns![i] === "loc" ? value.trim() : value;
    });
    yield { line: row.line, input };
  }
}
