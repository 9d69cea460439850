/**
 * `<loc>` normalisation: RFC 3986 syntax-based normalisation on top of the WHATWG URL parser.
 *
 * The WHATWG parser does the heavy lifting (IDNA → punycode, UTF-8 percent-encoding, lowercase
 * scheme and host, default port removal, dot segments), but it is built to be forgiving: it
 * strips tabs/newlines/edge spaces, turns `\` into `/`, accepts `http:example.com`, drops an
 * empty `@`. Each of those silently changes what was given, so the raw input is checked first
 * and such inputs are rejected instead of "repaired".
 */
import { MAX_LOC_LENGTH, MIN_LOC_LENGTH } from "./limits.ts";
import { describeCharAt, findXmlForbiddenChar } from "./xml-chars.ts";

export type LocResult =
  | { ok: true; loc: string; origin: string }
  | { ok: false; rule: "absolute-url" | "scheme" | "length" | "xml-char"; message: string };

type LocFailure = Extract<LocResult, { ok: false }>;

/**
 * Upper bound on the raw input before any parsing, so a multi-megabyte string costs nothing.
 * Normalisation rarely shortens a URL (only dot segments, default ports and decoded
 * `%XX` of unreserved characters do), so anything this long cannot end up ≤ 2,047 in practice.
 */
const MAX_RAW_LOC_LENGTH = 8 * 1024;

/** Whitespace and controls the URL parser would strip or that no one means in a URL. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const WHITESPACE_OR_CONTROL = /[\s\x00-\x1f\x7f-\x9f]/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
/** What may still need fixing after the WHATWG parser (see normalizeTail). */
const TAIL_FIXUP_NEEDED = /[%^|[\]{}`\\]/;
const TAIL_FIXUP = /%[0-9A-Fa-f]{2}|[%^|[\]{}`\\]/g;
/** RFC 3986 §2.3 unreserved characters. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

const fail = (rule: LocFailure["rule"], message: string): LocFailure => ({ ok: false, rule, message });

/**
 * `%XX` with uppercase hex, decoding it if it is unreserved (§6.2.2.1, §6.2.2.2); everything
 * else the parser left bare but RFC 3986 does not allow (`^`, `|`, `[`, `]`, `{`, `}`, backtick,
 * backslash in the query, a `%` without two hex digits) percent-encoded.
 */
function fixupMatch(match: string): string {
  if (match.length === 3) {
    const ch = String.fromCharCode(parseInt(match.slice(1), 16));
    return UNRESERVED.test(ch) ? ch : match.toUpperCase();
  }
  return `%${match.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`;
}

/**
 * Path, query and fragment as serialised by the parser, brought to RFC 3986 normal form.
 * Decoding `%2E` cannot create new dot segments: the parser already resolved `%2e` segments.
 */
function normalizeTail(tail: string): string {
  return TAIL_FIXUP_NEEDED.test(tail) ? tail.replace(TAIL_FIXUP, fixupMatch) : tail;
}

/** Length of `http://` / `https://` when raw starts with it in lowercase (the common case), else 0. */
function lowercaseSchemePrefix(raw: string): number {
  if (raw.startsWith("https://")) return 8;
  if (raw.startsWith("http://")) return 7;
  return 0;
}

/** Index of the first `/ ? # \` at or after `from` (where the authority ends), or raw.length. */
function findAuthorityEnd(raw: string, from: number): number {
  for (let i = from; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x2f || c === 0x3f || c === 0x23 || c === 0x5c) return i;
  }
  return raw.length;
}

/** Where `\` lies before the query/fragment, i.e. where the parser would rewrite it to `/`. */
function hasBackslashBeforeQuery(raw: string, from: number): boolean {
  for (let i = from; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x5c) return true;
    if (c === 0x3f || c === 0x23) return false;
  }
  return false;
}

/**
 * Structural checks on the raw string that the URL parser would otherwise paper over.
 * Returns the failure, or the index in raw where the authority ends (path, `?`, `#` or the end).
 * Written as charCodeAt loops with a fast path: it runs once per record on every batch.
 */
function checkRawShape(raw: string, field: string): number | LocFailure {
  const bad = findXmlForbiddenChar(raw);
  if (bad !== -1) {
    return fail("xml-char", `${field} contains ${describeCharAt(raw, bad)} at position ${bad}, which XML 1.0 forbids`);
  }
  const ws = raw.search(WHITESPACE_OR_CONTROL);
  if (ws !== -1) {
    return fail("absolute-url", `${field} contains whitespace or a control character (${describeCharAt(raw, ws)}) at position ${ws}; percent-encode it`);
  }
  let authorityStart = lowercaseSchemePrefix(raw);
  if (authorityStart === 0) {
    const scheme = SCHEME.exec(raw);
    if (scheme === null) {
      return fail("absolute-url", `${field} must be an absolute URL starting with https:// or http://`);
    }
    const name = (scheme[1] ?? "").toLowerCase();
    if (name !== "http" && name !== "https") {
      return fail("scheme", `${field} must use the http or https scheme, got "${name.slice(0, 32)}:"`);
    }
    authorityStart = scheme[0].length + 2;
    if (raw.charCodeAt(authorityStart - 2) !== 0x2f || raw.charCodeAt(authorityStart - 1) !== 0x2f) {
      return fail("absolute-url", `${field} must be an absolute URL: "${name}:" must be followed by "//" and a host`);
    }
  }
  const authorityEnd = findAuthorityEnd(raw, authorityStart);
  if (authorityEnd === authorityStart) {
    return fail("absolute-url", `${field} must be an absolute URL with a host`);
  }
  if (raw.lastIndexOf("@", authorityEnd - 1) >= authorityStart) {
    return fail("absolute-url", `${field} must not contain credentials (user:password@)`);
  }
  // In the authority and path the parser rewrites `\` to `/`; reject rather than guess.
  if (hasBackslashBeforeQuery(raw, authorityEnd)) {
    return fail("absolute-url", `${field} contains a backslash in its host or path; use "/" or percent-encode it as %5C`);
  }
  return authorityEnd;
}

function parse(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

/*
 * The fast path. The parser and the fix-ups above turn a URL whose host is plain lowercase ASCII
 * (no port, no credentials, no IDN) and whose path has no dot segments into itself, with only
 * some characters of its path, query and fragment percent-encoded. Such a URL is normalised
 * here in one scan, without the parser. Anything else (and anything doubtful) returns null and
 * takes the general path, which also produces every error message.
 */

/** How the fast path treats an ASCII character after the host: keep it, percent-encode it, or give up. */
const GIVE_UP = 0;
const KEEP = 1;
const ENCODE = 2;
const TAIL_ACTION = new Uint8Array(128); // GIVE_UP by default: controls, space, DEL, `\`
for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&()*+,;=:@/?#'%") {
  TAIL_ACTION[c.charCodeAt(0)] = KEEP; // `?`, `#`, `'` and `%` are looked at more closely in the scan
}
// The parser encodes some of these, the fix-ups the others: in every part, they end up as %XX.
for (const c of '"<>`{}^|[]') TAIL_ACTION[c.charCodeAt(0)] = ENCODE;

const isLowerOrDigit = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);
const isUpperHex = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46);
const isHex = (c: number): boolean => isUpperHex(c) || (c >= 0x61 && c <= 0x66);
const isUnreservedByte = (c: number): boolean => isLowerOrDigit(c) || (c >= 0x41 && c <= 0x5a) || c === 0x2d || c === 0x2e || c === 0x5f || c === 0x7e;

/** A DNS label the host parser keeps as is: 1–63 characters, not punycode (which it would check). */
function plainLabel(raw: string, start: number, end: number): boolean {
  return end > start && end - start <= 63 && !raw.startsWith("xn--", start);
}

/**
 * Where the authority ends when raw is `http(s)://` and a host of lowercase ASCII labels
 * (`a-z`, `0-9`, `-`) whose last label starts with a letter (so it is no IPv4 address), with
 * neither port nor credentials; -1 otherwise.
 */
function plainAuthorityEnd(raw: string): number {
  const start = lowercaseSchemePrefix(raw);
  if (start === 0) return -1;
  let labelStart = start;
  let i = start;
  for (; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (isLowerOrDigit(c) || c === 0x2d) continue;
    if (c === 0x2f || c === 0x3f || c === 0x23) break; // "/", "?", "#"
    if (c !== 0x2e || !plainLabel(raw, labelStart, i)) return -1; // anything but "." between labels
    labelStart = i + 1;
  }
  const last = raw.charCodeAt(labelStart);
  if (!plainLabel(raw, labelStart, i) || !(last >= 0x61 && last <= 0x7a) || i - start > 253) return -1;
  return i;
}

/**
 * A non-ASCII UTF-16 unit the parser simply percent-encodes: not a C1 control, not whitespace
 * (`\s`), not a surrogate (pairs are rare; lone ones XML forbids) and not U+FFFE/U+FFFF.
 */
function plainNonAscii(c: number): boolean {
  if (c <= 0xa0) return false;
  if (c < 0x1680) return true;
  if (c >= 0xd800) return c >= 0xe000 && c < 0xfffe && c !== 0xfeff;
  return c !== 0x1680 && !(c >= 0x2000 && c <= 0x200a) && c !== 0x2028 && c !== 0x2029 && c !== 0x202f && c !== 0x205f && c !== 0x3000;
}

/** True when a path segment starting at `i` is "." or ".." (the parser would resolve it). */
function isDotSegment(raw: string, i: number): boolean {
  if (raw.charCodeAt(i) !== 0x2e) return false;
  const next = raw.charCodeAt(i + 1) === 0x2e ? i + 2 : i + 1;
  const c = raw.charCodeAt(next);
  return next >= raw.length || c === 0x2f || c === 0x3f || c === 0x23;
}

/**
 * raw in normal form (raw itself when it already is), given that its authority is plain and
 * ends at `authorityEnd`; null when the general path must decide.
 */
function plainNormalForm(raw: string, authorityEnd: number): string | null {
  let part = 0; // 0 path, 1 query, 2 fragment
  let changes = false;
  let encodeUriFits = true; // no "%" and no "'" in the query: encodeURI does exactly the encoding needed
  for (let i = authorityEnd; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c >= 0x80) {
      if (!plainNonAscii(c)) return null;
      changes = true;
      continue;
    }
    const action = TAIL_ACTION[c];
    if (action === GIVE_UP) return null;
    if (action === ENCODE) changes = true;
    else if (c === 0x2f) {
      if (part === 0 && isDotSegment(raw, i + 1)) return null;
    } else if (c === 0x3f) {
      if (part === 0) part = 1;
    } else if (c === 0x23) {
      if (part === 2) return null; // a second "#": rare, left to the general path
      part = 2;
    } else if (c === 0x27) {
      // The parser encodes `'` in a query only, encodeURI never does.
      if (part === 1) {
        changes = true;
        encodeUriFits = false;
      }
    } else if (c === 0x25) {
      encodeUriFits = false;
      const h1 = raw.charCodeAt(i + 1);
      const h2 = raw.charCodeAt(i + 2);
      if (!isHex(h1) || !isHex(h2))
        changes = true; // a bare "%": encoded as %25
      else if (!isUpperHex(h1) || !isUpperHex(h2) || isUnreservedByte(parseInt(raw.slice(i + 1, i + 3), 16))) return null;
      else i += 2;
    }
  }
  if (!changes) return raw;
  // encodeURI: UTF-8, uppercase hex, and it keeps the host, "/", "?", "#" and "'" (one flat string); no surrogates, so it cannot throw.
  return encodeUriFits ? encodeURI(raw) : raw.slice(0, authorityEnd) + encodeTail(raw, authorityEnd);
}

/** The tail from `from` with what plainNormalForm found to change percent-encoded (UTF-8, uppercase hex). */
function encodeTail(raw: string, from: number): string {
  let out = "";
  let kept = from; // raw[kept, i) is still to be copied as is
  let part = 0; // 0 path, 1 query, 2 fragment
  for (let i = from; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    let end = i + 1;
    let encoded: string;
    if (c >= 0x80) {
      while (end < raw.length && raw.charCodeAt(end) >= 0x80) end++;
      encoded = encodeURIComponent(raw.slice(i, end)); // no surrogates: cannot throw
    } else if (TAIL_ACTION[c] === ENCODE || (c === 0x27 && part === 1)) {
      encoded = `%${c.toString(16).toUpperCase()}`;
    } else if (c === 0x25) {
      if (isHex(raw.charCodeAt(i + 1)) && isHex(raw.charCodeAt(i + 2))) {
        i += 2;
        continue;
      }
      encoded = "%25";
    } else {
      if (c === 0x3f && part === 0) part = 1;
      else if (c === 0x23) part = 2;
      continue;
    }
    out += raw.slice(kept, i) + encoded;
    kept = end;
    i = end - 1;
  }
  return out + raw.slice(kept);
}

/** The loc as normalised, checked against the length limits once normalised. */
function withinLimits(loc: string, origin: string): LocResult {
  if (loc.length > MAX_LOC_LENGTH) {
    return fail("length", `loc must be at most ${MAX_LOC_LENGTH} characters after normalisation, got ${loc.length}`);
  }
  if (loc.length < MIN_LOC_LENGTH) {
    return fail("length", `loc must be at least ${MIN_LOC_LENGTH} characters, got ${loc.length}`);
  }
  return { ok: true, loc, origin };
}

/** The general path: raw shape checks, the WHATWG parser, then the RFC 3986 fix-ups of the tail. */
function normalizeParsed(raw: string): LocResult {
  const authorityEnd = checkRawShape(raw, "loc");
  if (typeof authorityEnd !== "number") return authorityEnd;

  const url = parse(raw);
  if (url === null) return fail("absolute-url", "loc is not a valid absolute URL (bad host or port?)");

  // No credentials (checked above), so href is exactly `${origin}${path}${?query}${#fragment}`.
  const origin = url.origin;
  const href = url.href;
  const rawPathEmpty = raw.charCodeAt(authorityEnd) !== 0x2f; // NaN at the end: also empty
  const dropSlash = rawPathEmpty && href.charCodeAt(origin.length) === 0x2f;
  const tail = dropSlash ? href.slice(origin.length + 1) : href.slice(origin.length);
  const fixed = normalizeTail(tail);
  // Reuse href itself in the common case: no concatenation, no second copy to flatten later.
  return withinLimits(!dropSlash && fixed === tail ? href : origin + fixed, origin);
}

/**
 * Normalises an absolute http(s) URL for `<loc>` (not entity-escaped; the renderer does that).
 * The root URL is kept as given: `https://example.com` stays without the `/` the parser adds,
 * `https://example.com/` keeps it.
 */
export function normalizeLoc(raw: string): LocResult {
  if (raw.length > MAX_RAW_LOC_LENGTH) {
    return fail("length", `loc must be at most ${MAX_LOC_LENGTH} characters, got ${raw.length}`);
  }
  // Almost every loc is in normal form already, or only needs percent-encoding: no parser needed.
  const authorityEnd = plainAuthorityEnd(raw);
  const loc = authorityEnd === -1 ? null : plainNormalForm(raw, authorityEnd);
  if (loc !== null) return withinLimits(loc, raw.slice(0, authorityEnd));
  return normalizeParsed(raw);
}

/**
 * A site origin from configuration: `https://example.com` or `https://example.com/` (http and
 * ports allowed, e.g. `http://localhost:8787`), nothing else. Returns `url.origin` or null.
 */
export function normalizeOrigin(raw: string): string | null {
  const authorityEnd = checkRawShape(raw, "origin");
  if (typeof authorityEnd !== "number") return null;
  const rest = raw.slice(authorityEnd);
  if (rest !== "" && rest !== "/") return null;
  const url = parse(raw);
  return url === null ? null : url.origin;
}
