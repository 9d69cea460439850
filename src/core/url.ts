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

/**
 * Normalises an absolute http(s) URL for `<loc>` (not entity-escaped; the renderer does that).
 * The root URL is kept as given: `https://example.com` stays without the `/` the parser adds,
 * `https://example.com/` keeps it.
 */
export function normalizeLoc(raw: string): LocResult {
  if (raw.length > MAX_RAW_LOC_LENGTH) {
    return fail("length", `loc must be at most ${MAX_LOC_LENGTH} characters, got ${raw.length}`);
  }
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
  const loc = !dropSlash && fixed === tail ? href : origin + fixed;

  if (loc.length > MAX_LOC_LENGTH) {
    return fail("length", `loc must be at most ${MAX_LOC_LENGTH} characters after normalisation, got ${loc.length}`);
  }
  if (loc.length < MIN_LOC_LENGTH) {
    return fail("length", `loc must be at least ${MIN_LOC_LENGTH} characters, got ${loc.length}`);
  }
  return { ok: true, loc, origin };
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
