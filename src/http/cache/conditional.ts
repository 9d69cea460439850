/**
 * Conditional requests (RFC 9110 §13): `If-None-Match` first, `If-Modified-Since` only when there
 * is no `If-None-Match`. Both are evaluated against the validators the response would carry, before
 * any body is produced, so a 304 costs no record read and no cache lookup.
 */

/**
 * The opaque tags of an `If-None-Match` value: `"*"`, or the quoted tags of a list (weak `W/`
 * prefixes dropped: GET uses weak comparison). Malformed members are skipped: a list of garbage
 * matches nothing, so the client simply gets the full response.
 */
export function parseEntityTags(header: string): "*" | string[] {
  if (header.trim() === "*") return "*";
  const tags: string[] = [];
  for (const match of header.matchAll(/(?:^|,)\s*(?:W\/)?("[\x21\x23-\x7e\x80-\xff]*")\s*(?=,|$)/g)) tags.push(match[1]!);
  return tags;
}

/** Weak comparison of `If-None-Match` with the current strong ETag (a quoted string). */
export function ifNoneMatchMatches(header: string, etag: string): boolean {
  const tags = parseEntityTags(header);
  if (tags === "*") return true;
  const opaque = etag.startsWith("W/") ? etag.slice(2) : etag;
  return tags.includes(opaque);
}

/** An HTTP-date in ms, or null when it is not one (then the header is ignored). */
export function parseHttpDate(value: string): number | null {
  const trimmed = value.trim();
  // IMF-fixdate, obsolete RFC 850 and asctime forms all contain a 4- or 2-digit year and a time.
  if (!/\d{1,2}:\d{2}:\d{2}/.test(trimmed)) return null;
  const ms = Date.parse(trimmed);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * Whether a GET/HEAD with these headers gets 304 for a representation with `etag` and
 * `lastModified` (ms; compared at HTTP-date resolution, whole seconds).
 */
export function isNotModified(headers: Headers, etag: string, lastModified: number): boolean {
  const inm = headers.get("if-none-match");
  if (inm !== null) return ifNoneMatchMatches(inm, etag);
  const ims = headers.get("if-modified-since");
  if (ims === null) return false;
  const since = parseHttpDate(ims);
  if (since === null) return false;
  return Math.floor(lastModified / 1000) * 1000 <= since;
}
