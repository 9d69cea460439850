/** XML entity escaping for text and attribute values. */

const NEEDS_ESCAPE = /[&<>"']/;

/**
 * Escapes `& < > " '`. Most values need nothing, so test first and return the same string.
 * Otherwise one native `replaceAll` per special character present (a `<loc>` with a query string
 * usually has only `&`): faster than `replace` with a callback per match (see BENCHMARKS.md).
 * `&` goes first so the entities added later are not escaped again.
 */
export function escapeXml(value: string): string {
  if (!NEEDS_ESCAPE.test(value)) return value;
  let s = value;
  if (s.includes("&")) s = s.replaceAll("&", "&amp;");
  if (s.includes("<")) s = s.replaceAll("<", "&lt;");
  if (s.includes(">")) s = s.replaceAll(">", "&gt;");
  if (s.includes('"')) s = s.replaceAll('"', "&quot;");
  if (s.includes("'")) s = s.replaceAll("'", "&apos;");
  return s;
}

/** Exact UTF-8 byte length of a string, without encoding it. Lone surrogates count as U+FFFD (3 bytes). */
export function utf8Length(value: string): number {
  let bytes = value.length;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2; // two UTF-16 units → four bytes
        i++;
      } else bytes += 2;
    } else bytes += 2;
  }
  return bytes;
}
