/**
 * Entity and character references, checked before saxes sees them. saxes reads a bare "&" as the
 * start of a reference up to the next ";", swallowing the markup in between (a whole file for
 * `?a=1&b=2`), and names no entity in its messages. Here every reference in text and attribute
 * values is checked with the messages sitemap authors need; a bad one is reported and its "&"
 * escaped, so the text keeps the reference as written and the rest of the file still reads.
 * Comments, CDATA sections and processing instructions are passed through untouched.
 */

export interface ReferenceProblem {
  /** Index in the checked output (the text saxes reads) of the "&" that was escaped. */
  at: number;
  message: string;
}

const PREDEFINED: ReadonlySet<string> = new Set(["lt", "gt", "amp", "quot", "apos"]);
/** Longest reference looked at: "&" + name + ";" (the longest character reference is 10). */
const MAX_REFERENCE = 12;

function isXmlChar(cp: number): boolean {
  return cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

/** Why the reference starting at text[0] === "&" is not acceptable, or undefined when it is. */
export function referenceProblem(text: string): string | undefined {
  const semi = text.indexOf(";", 1);
  const name = semi === -1 ? "" : text.slice(1, semi);
  if (semi === -1 || semi > MAX_REFERENCE || name === "") {
    return `"&" must be escaped as &amp; in XML (near ${JSON.stringify(text.slice(0, MAX_REFERENCE))})`;
  }
  if (PREDEFINED.has(name)) return undefined;
  if (name.startsWith("#")) {
    const cp = /^#x[0-9a-fA-F]{1,6}$/.test(name) ? parseInt(name.slice(2), 16) : /^#[0-9]{1,7}$/.test(name) ? parseInt(name.slice(1), 10) : NaN;
    return isXmlChar(cp) ? undefined : `character reference &${name}; is not an XML character`;
  }
  return `unknown entity &${name}; (XML has only &lt; &gt; &amp; &quot; &apos;)`;
}

type Section = "markup" | "comment" | "cdata" | "pi";
const SECTION_OPEN: readonly [string, Section][] = [
  ["<!--", "comment"],
  ["<![CDATA[", "cdata"],
  ["<?", "pi"],
];
const SECTION_CLOSE: Readonly<Record<Exclude<Section, "markup">, string>> = { comment: "-->", cdata: "]]>", pi: "?>" };

/** Streams text through the check; chunks may split anything (a held-back tail is at most a few characters). */
export class ReferenceChecker {
  #section: Section = "markup";
  #held = "";
  /** Characters handed out so far. */
  #emitted = 0;
  readonly problems: ReferenceProblem[] = [];

  check(chunk: string, final = false): string {
    const buf = this.#held + chunk;
    this.#held = "";
    let out = "";
    let pos = 0;
    while (pos < buf.length) {
      if (this.#section !== "markup") {
        const close = SECTION_CLOSE[this.#section];
        const end = buf.indexOf(close, pos);
        if (end === -1) {
          // Keep what could be the start of the closing delimiter.
          const keep = final ? buf.length : Math.max(pos, buf.length - close.length + 1);
          out += buf.slice(pos, keep);
          pos = keep;
          break;
        }
        out += buf.slice(pos, end + close.length);
        pos = end + close.length;
        this.#section = "markup";
        continue;
      }
      const amp = buf.indexOf("&", pos);
      const lt = buf.indexOf("<", pos);
      const next = amp === -1 ? lt : lt === -1 ? amp : Math.min(amp, lt);
      if (next === -1) {
        out += buf.slice(pos);
        pos = buf.length;
        break;
      }
      out += buf.slice(pos, next);
      pos = next;
      const rest = buf.slice(next, next + MAX_REFERENCE + 1);
      if (next === lt) {
        const opened = SECTION_OPEN.find(([open]) => rest.startsWith(open));
        if (opened === undefined && !final && rest.length < 9 && SECTION_OPEN.some(([open]) => open.startsWith(rest))) break;
        const skip = opened?.[0].length ?? 1;
        this.#section = opened?.[1] ?? "markup";
        out += buf.slice(pos, pos + skip);
        pos += skip;
        continue;
      }
      if (!final && !rest.includes(";") && rest.length <= MAX_REFERENCE) break;
      const problem = referenceProblem(rest);
      if (problem === undefined) {
        out += "&";
      } else {
        this.problems.push({ at: this.#emitted + out.length, message: problem });
        out += "&amp;";
      }
      pos += 1;
    }
    this.#held = buf.slice(pos);
    this.#emitted += out.length;
    return out;
  }

  /** The first problem before `position` of the output, dropping all of them up to there. */
  takeBefore(position: number): string | undefined {
    let first: string | undefined;
    while (this.problems.length > 0 && this.problems[0]!.at < position) first ??= this.problems.shift()!.message;
    return first;
  }
}
