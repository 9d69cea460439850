/**
 * XML 1.0 character checks.
 *
 * XML 1.0 §2.2: Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
 * One forbidden character anywhere makes the whole sitemap file unparseable, and entity
 * escaping cannot help (`&#1;` is forbidden too), so such values must be rejected at ingest.
 * C1 controls (U+0080–U+009F) are "discouraged" but legal, so they pass.
 */

/**
 * Index (UTF-16 code unit) of the first character XML 1.0 forbids, or -1 when `s` is clean.
 * A surrogate pair counts as one legal character; a lone surrogate is forbidden.
 */
export function findXmlForbiddenChar(s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    // Fast path: printable BMP below the surrogates covers virtually all real text.
    if (c >= 0x20 && c < 0xd800) continue;
    if (c < 0x20) {
      if (c === 0x09 || c === 0x0a || c === 0x0d) continue;
      return i;
    }
    if (c <= 0xdbff) {
      // High surrogate: legal only as the first half of a pair.
      const next = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return i;
    }
    if (c <= 0xdfff) return i; // low surrogate without a preceding high one
    if (c >= 0xfffe) return i; // U+FFFE, U+FFFF (noncharacters excluded by XML 1.0)
  }
  return -1;
}

/**
 * `U+XXXX` label of the character at `index`, for error messages (which must not echo the
 * forbidden character itself, or the message would carry the same poison).
 */
export function describeCharAt(s: string, index: number): string {
  const cp = s.codePointAt(index) ?? 0;
  const hex = cp.toString(16).toUpperCase().padStart(4, "0");
  return cp >= 0xd800 && cp <= 0xdfff ? `U+${hex} (lone surrogate)` : `U+${hex}`;
}
