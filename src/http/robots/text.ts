/**
 * The robots.txt bodies we compose, as bytes: the origin's file is kept byte for byte (whatever
 * its encoding, line endings, BOM, groups or `Host:` line), and only whole `Sitemap:` lines are
 * added after it.
 */
import { concatBytes } from "../../core/bytes.ts";

/** Crawlers parse the first 500 KiB of robots.txt (RFC 9309 §2.5; Google ignores the rest). */
export const ROBOTS_READ_LIMIT = 500 * 1024;

const SITEMAP_LINE = /^[ \t]*sitemap[ \t]*:[ \t]*(\S+)/i;
const LF = 0x0a;
const CR = 0x0d;
const encoder = new TextEncoder();

function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
}

/**
 * The first bytes of a file longer than crawlers read, up to its last line end: what a crawler
 * would parse of it, without a rule cut in the middle (a cut `Allow: /private-help` would become
 * `Allow: /priv`, allowing more than the origin does).
 */
export function cutAtLineEnd(prefix: Uint8Array): Uint8Array {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] === LF || prefix[i] === CR) return prefix.subarray(0, i + 1);
  }
  return prefix.subarray(0, 0);
}

/**
 * The origin's robots.txt with a `Sitemap:` line added for each URL it does not list yet
 * (comparison after URL normalisation, so `HTTPS://Example.com/sitemap.xml` counts as listed),
 * after a blank line, in the file's own line endings. The origin's bytes come first and stay at
 * their offsets: for a file near 500 KiB the added lines fall past what Google reads, which loses
 * nothing of the origin's rules (the other order would push its last rules out of reach).
 */
export function mergeRobots(original: Uint8Array, sitemaps: readonly string[]): Uint8Array {
  // Latin-1 maps every byte to one character: the Sitemap: URLs (ASCII) are found in any encoding.
  const text = new TextDecoder("latin1").decode(original);
  const listed = text
    .split(/\r\n|\r|\n/)
    .map((line) => SITEMAP_LINE.exec(line)?.[1])
    .filter((v): v is string => v !== undefined);
  const missing = [...new Set(sitemaps)].filter((url) => !listed.some((l) => sameUrl(l, url)));
  if (missing.length === 0) return original;
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const block = missing.map((url) => `Sitemap: ${url}${eol}`).join("");
  if (text.replace(/^\u00EF\u00BB\u00BF/, "").trim() === "") return encoder.encode(block); // empty, or a UTF-8 BOM alone
  const separator = /[\r\n]$/.test(text) ? eol : eol + eol;
  const added = encoder.encode(separator + block);
  return concatBytes([original, added], original.length + added.length);
}

/** A minimal valid robots.txt: everything allowed, and the sitemaps (the origin has no file). */
export function minimalRobots(sitemaps: readonly string[]): string {
  return `User-agent: *\nDisallow:\n\n${[...new Set(sitemaps)].map((url) => `Sitemap: ${url}\n`).join("")}`;
}
