/**
 * Whether an origin's robots.txt answer is an HTML document (a soft 404: a front end's catch-all
 * page) rather than a rules file, decided from the body alone: the Content-Type says nothing a
 * crawler trusts (Express `res.send`, Django's `HttpResponse` and PHP send robots.txt rules as
 * `text/html`, and crawlers parse the body whatever the header says). An HTML document starts,
 * after an optional UTF-8 BOM and whitespace, with `<!doctype html` or `<html`, in any letter case;
 * anything else is read as rules, kept byte for byte.
 */
const BOM = [0xef, 0xbb, 0xbf];
/** HTML's ASCII whitespace: tab, LF, FF, CR, space. */
const WHITESPACE = new Set([0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const OPENINGS = ["<!doctype html", "<html"];
const LONGEST = Math.max(...OPENINGS.map((o) => o.length));

export function isHtmlDocument(body: Uint8Array): boolean {
  let i = BOM.every((b, k) => body[k] === b) ? BOM.length : 0;
  while (i < body.length && WHITESPACE.has(body[i]!)) i++;
  // Latin-1 maps each byte to one character: no decoding error can hide or fake the opening.
  const start = new TextDecoder("latin1").decode(body.subarray(i, i + LONGEST)).toLowerCase();
  return OPENINGS.some((opening) => start.startsWith(opening));
}
