/**
 * XSD validation with libxml2 (xmllint compiled to wasm), against the official schemas in
 * test/fixtures/xsd. Offline: the one network import (xhtml1-strict.xsd → w3.org/2001/xml.xsd) is
 * pointed at the local copy in memory, as catalog.xml does for the xmllint CLI.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { memoryPages, validateXML } from "xmllint-wasm";

const dir = fileURLToPath(new URL("../../fixtures/xsd/", import.meta.url));
const SCHEMA_FILES = [
  "sitemap.xsd",
  "siteindex.xsd",
  "sitemap-image.xsd",
  "sitemap-video.xsd",
  "sitemap-news.xsd",
  "xhtml1-strict.xsd",
  "xml.xsd",
  "all-urlset.xsd",
];

const files = SCHEMA_FILES.map((fileName) => ({
  fileName,
  contents: readFileSync(dir + fileName, "utf8").replace('schemaLocation="http://www.w3.org/2001/xml.xsd"', 'schemaLocation="xml.xsd"'),
}));

export type DocumentKind = "urlset" | "siteindex";

export interface XsdResult {
  valid: boolean;
  errors: string[];
}

/** Validates one document: a urlset (with any extensions) or a sitemap index. */
export async function validateXml(xml: string | Uint8Array, kind: DocumentKind): Promise<XsdResult> {
  const schemaName = kind === "urlset" ? "all-urlset.xsd" : "siteindex.xsd";
  const schema = files.find((f) => f.fileName === schemaName)!;
  const result = await validateXML({
    xml: { fileName: "document.xml", contents: xml },
    schema,
    preload: files.filter((f) => f !== schema),
    initialMemoryPages: 256 * 4,
    maxMemoryPages: memoryPages.GiB,
  });
  return { valid: result.valid, errors: result.errors.map((e) => e.rawMessage) };
}
