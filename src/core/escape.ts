/** XML entity escaping for text and attribute values. */

const NEEDS_ESCAPE = /[&<>"']/;
const ESCAPABLE = /[&<>"']/g;
const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };
const entityOf = (c: string): string => ENTITIES[c] ?? c;

/** Escapes `& < > " '`. Most values need nothing, so test first and return the same string. */
export function escapeXml(value: string): string {
  return NEEDS_ESCAPE.test(value) ? value.replace(ESCAPABLE, entityOf) : value;
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
