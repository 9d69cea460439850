/**
 * Input formats → items: CSV, NDJSON, plain text (one URL per line) and XML (sitemaps, sitemap
 * indexes, RSS and Atom feeds: the root element tells which). Every item
 * carries the line it starts on. A line that cannot become a record is an item with `error`; a
 * file that cannot be read on (broken XML structure, a CSV header with unknown columns) throws
 * InputError.
 */

import { SitemapXmlReader } from "../../src/ingest/sitemap-xml.ts";
import { XmlError } from "../../src/ingest/xml.ts";
import type { DroppedHandler } from "../../src/ingest/xml-node.ts";
import { readCsv } from "./csv.ts";
import { lines, texts } from "./decode.ts";
import { InputError, type Opened } from "./input.ts";
import type { Item } from "./item.ts";

export const FORMATS = ["csv", "ndjson", "text", "xml"] as const;
export type Format = (typeof FORMATS)[number];

/** Format from the name (`.gz` stripped), else sniffed from the first bytes. */
export function detectFormat(name: string, head: Uint8Array): Format {
  const path = name
    .replace(/[?#].*$/, "")
    .toLowerCase()
    .replace(/\.gz$/, "");
  if (path.endsWith(".xml") || path.endsWith(".rss") || path.endsWith(".atom")) return "xml";
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

async function* readXml(opened: Opened, dropped: DroppedHandler): AsyncGenerator<Item> {
  const reader = new SitemapXmlReader(dropped, opened.base.kind === "url" ? opened.base.url.href : undefined);
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
