/**
 * A URL as a person reads it (docs/browser-view.md): the percent-encoded UTF-8 of visible
 * non-ASCII characters is decoded (`stra%C3%9Fe-jalape%C3%B1o` → `straße-jalapeño`), the way a
 * browser's address bar shows it. Everything else stays exactly as written:
 *
 * - ASCII escapes (`%20`, `%2F`, `%3C`, `%25`, …): decoded they would change where the URL's parts
 *   end or how it is read, and never make it more readable;
 * - a malformed sequence (a lone or overlong byte, a surrogate, a truncated character): its bytes
 *   as written, the rest of the URL still decoded;
 * - characters one cannot see or that change how the text around them reads: controls, format
 *   characters (bidi controls, zero-width characters, the soft hyphen), every kind of space,
 *   default-ignorable code points (variation selectors, fillers), private-use and unassigned code
 *   points.
 *
 * The result is text to show, never a link: the page still escapes it (`h()`), and links the exact `loc`.
 */

/** A run of percent escapes. */
const ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;

/** Characters that stay encoded: invisible, or changing how the text around them is shown. */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Z}\p{Co}\p{Cn}\p{Cs}\p{Default_Ignorable_Code_Point}]/u;

/** Bytes of the UTF-8 sequence a lead byte starts; 0 for a byte that starts none (ASCII included). */
function sequenceLength(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

function decodeRun(run: string): string {
  let out = "";
  for (let i = 0; i < run.length; ) {
    const length = sequenceLength(Number.parseInt(run.slice(i + 1, i + 3), 16));
    const escapes = run.slice(i, i + 3 * length);
    let char: string | null = null;
    if (length > 0 && escapes.length === 3 * length) {
      try {
        char = decodeURIComponent(escapes); // throws on a bad continuation, an overlong form, a surrogate
      } catch {
        char = null;
      }
    }
    if (char === null || HIDDEN.test(char)) {
      // As written: the whole character when it decoded (hidden), else this one byte.
      const kept = char === null ? 3 : escapes.length;
      out += run.slice(i, i + kept);
      i += kept;
    } else {
      out += char;
      i += escapes.length;
    }
  }
  return out;
}

export function readableUrl(url: string): string {
  return url.includes("%") ? url.replace(ESCAPES, decodeRun) : url;
}
