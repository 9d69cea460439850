/**
 * A small streaming XML tokenizer for sitemaps: text goes in chunk by chunk (any split, even inside
 * a tag or an entity), events come out with the line they start on. Memory is bounded by the
 * longest single tag or text node, never by the document.
 *
 * It implements what sitemaps use: elements, attributes, namespaces, text, the five predefined
 * entities and character references, CDATA, comments and processing instructions. A DOCTYPE is
 * refused (no entity expansion, no external entities). Structural errors (unclosed or mismatched
 * tags) throw XmlError; a bad entity in a text or attribute marks just that event with `error`,
 * so the record containing it can be reported and the rest of the file still read.
 */

export interface XmlStart {
  kind: "start";
  /** Namespace URI ("" when none). */
  ns: string;
  local: string;
  /** Attributes by qualified name as written (xmlns declarations included), entity-decoded. */
  attrs: Map<string, string>;
  line: number;
  /** Set when an attribute value had a bad entity reference. */
  error?: string;
}

export interface XmlEnd {
  kind: "end";
  ns: string;
  local: string;
  line: number;
}

export interface XmlText {
  kind: "text";
  text: string;
  line: number;
  error?: string;
}

export type XmlEvent = XmlStart | XmlEnd | XmlText;

export class XmlError extends Error {
  override readonly name = "XmlError";
  readonly line: number;
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.line = line;
  }
}

/** Longest markup (one tag, comment, PI) or text node accepted: far above any sane sitemap value. */
export const MAX_TOKEN_CHARS = 1 << 20;

const XML_NS = "http://www.w3.org/XML/1998/namespace";
const PREDEFINED: Readonly<Record<string, string>> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };
const NAME = /^[A-Za-z_:][-A-Za-z0-9_:.\u00b7\u00c0-\uffff]*$/;
const ATTRIBUTE = /\s*([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/y;

function isXmlChar(cp: number): boolean {
  return cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

/** Entity-decoded text, or an error naming the first bad reference. */
export function decodeEntities(raw: string): { text: string; error?: string } {
  let amp = raw.indexOf("&");
  if (amp === -1) return { text: raw };
  let out = "";
  let from = 0;
  while (amp !== -1) {
    out += raw.slice(from, amp);
    const semi = raw.indexOf(";", amp + 1);
    const name = semi === -1 ? "" : raw.slice(amp + 1, semi);
    if (semi === -1 || semi - amp > 12 || name === "") {
      return { text: out + raw.slice(amp), error: `"&" must be escaped as &amp; in XML (near ${JSON.stringify(raw.slice(amp, amp + 12))})` };
    }
    let ch: string | undefined = PREDEFINED[name];
    if (ch === undefined && name.startsWith("#")) {
      const cp = /^#x[0-9a-fA-F]{1,6}$/.test(name) ? parseInt(name.slice(2), 16) : /^#[0-9]{1,7}$/.test(name) ? parseInt(name.slice(1), 10) : NaN;
      if (isXmlChar(cp)) ch = String.fromCodePoint(cp);
      else return { text: out + raw.slice(amp), error: `character reference &${name}; is not an XML character` };
    }
    if (ch === undefined) return { text: out + raw.slice(amp), error: `unknown entity &${name}; (XML has only &lt; &gt; &amp; &quot; &apos;)` };
    out += ch;
    from = semi + 1;
    amp = raw.indexOf("&", from);
  }
  return { text: out + raw.slice(from) };
}

interface OpenElement {
  qname: string;
  ns: string;
  local: string;
  /** Namespace bindings in scope for this element's children. */
  scope: Map<string, string>;
}

export class XmlTokenizer {
  #buf = "";
  #line = 1;
  #text: string[] = [];
  #textChars = 0;
  #textLine = 1;
  /** Some CDATA is in #text: those parts are literal, the rest still needs entity decoding. */
  #textDecoded: boolean[] = [];
  readonly #stack: OpenElement[] = [];
  #rootSeen = false;
  #rootClosed = false;
  #events: XmlEvent[] = [];

  /** Current line (where the unconsumed input starts). */
  get line(): number {
    return this.#line;
  }

  /** Feeds the next piece of text; returns the events it completed. */
  feed(chunk: string): XmlEvent[] {
    this.#buf += chunk;
    this.#scan(false);
    return this.#take();
  }

  /** Signals the end of input; throws if the document is incomplete. */
  end(): XmlEvent[] {
    this.#scan(true);
    if (this.#buf.trim() !== "") throw new XmlError(this.#line, "unexpected end of input inside markup");
    this.#flushText();
    if (!this.#rootSeen) throw new XmlError(this.#line, "no root element: the input is empty or not XML");
    const open = this.#stack[this.#stack.length - 1];
    if (open) throw new XmlError(this.#line, `unexpected end of input: <${open.qname}> is not closed`);
    return this.#take();
  }

  #take(): XmlEvent[] {
    const events = this.#events;
    this.#events = [];
    return events;
  }

  /** Moves the line counter over buf[from, to). */
  #advance(buf: string, from: number, to: number): void {
    for (let nl = buf.indexOf("\n", from); nl !== -1 && nl < to; nl = buf.indexOf("\n", nl + 1)) this.#line++;
  }

  #addText(raw: string, literal: boolean): void {
    if (this.#text.length === 0) this.#textLine = this.#line;
    this.#textChars += raw.length;
    if (this.#textChars > MAX_TOKEN_CHARS) throw new XmlError(this.#textLine, `text longer than ${MAX_TOKEN_CHARS} characters`);
    this.#text.push(raw);
    this.#textDecoded.push(literal);
  }

  #flushText(): void {
    if (this.#text.length === 0) return;
    // Runs of raw parts are joined before decoding: a chunk boundary may split an entity.
    let text = "";
    let raw = "";
    let error: string | undefined;
    const decodeRun = (): void => {
      if (raw === "") return;
      const decoded = decodeEntities(raw);
      text += decoded.text;
      error ??= decoded.error;
      raw = "";
    };
    for (let i = 0; i < this.#text.length; i++) {
      if (this.#textDecoded[i]) {
        decodeRun();
        text += this.#text[i]!;
      } else {
        raw += this.#text[i]!;
      }
    }
    decodeRun();
    const line = this.#textLine;
    this.#text = [];
    this.#textDecoded = [];
    this.#textChars = 0;
    if (text.trim() === "" && error === undefined) return;
    if (this.#stack.length === 0) {
      throw new XmlError(line, this.#rootSeen ? "text after the root element" : "text before the root element");
    }
    const event: XmlText = { kind: "text", text, line };
    if (error !== undefined) event.error = error;
    this.#events.push(event);
  }

  #scan(final: boolean): void {
    const buf = this.#buf;
    let pos = 0;
    while (pos < buf.length) {
      const lt = buf.indexOf("<", pos);
      if (lt === -1) {
        this.#addText(buf.slice(pos), false);
        this.#advance(buf, pos, buf.length);
        pos = buf.length;
        break;
      }
      if (lt > pos) {
        this.#addText(buf.slice(pos, lt), false);
        this.#advance(buf, pos, lt);
        pos = lt;
      }
      // Too little left to tell "<!--" from "<![CDATA[" or "<!DOCTYPE": wait for more.
      if (!final && buf.length - pos < 9 && buf.indexOf(">", pos) === -1) break;
      const end = this.#markup(buf, pos);
      if (end === -1) break;
      this.#advance(buf, pos, end);
      pos = end;
    }
    this.#buf = buf.slice(pos);
    if (this.#buf.length > MAX_TOKEN_CHARS) throw new XmlError(this.#line, `markup longer than ${MAX_TOKEN_CHARS} characters`);
  }

  /** Handles the markup at buf[pos] === "<"; returns the index after it, or -1 if incomplete. */
  #markup(buf: string, pos: number): number {
    if (buf.startsWith("<!--", pos)) {
      const end = buf.indexOf("-->", pos + 4);
      return end === -1 ? -1 : end + 3;
    }
    if (buf.startsWith("<![CDATA[", pos)) {
      const end = buf.indexOf("]]>", pos + 9);
      if (end === -1) return -1;
      if (this.#stack.length === 0) throw new XmlError(this.#line, "CDATA outside the root element");
      this.#addText(buf.slice(pos + 9, end), true);
      return end + 3;
    }
    if (buf.startsWith("<?", pos)) {
      const end = buf.indexOf("?>", pos + 2);
      if (end === -1) return -1;
      this.#processingInstruction(buf.slice(pos + 2, end));
      return end + 2;
    }
    if (buf.startsWith("<!", pos)) {
      throw new XmlError(this.#line, "DOCTYPE and DTD declarations are not accepted in a sitemap");
    }
    const end = tagEnd(buf, pos + 1);
    if (end === -1) return -1;
    this.#flushText();
    if (buf.charCodeAt(pos + 1) === 0x2f) this.#endTag(buf.slice(pos + 2, end).trim());
    else this.#startTag(buf.slice(pos + 1, end));
    return end + 1;
  }

  #processingInstruction(body: string): void {
    const target = /^\S+/.exec(body)?.[0] ?? "";
    if (target.toLowerCase() !== "xml") return; // e.g. <?xml-stylesheet ...?>: ignored
    const encoding = /encoding\s*=\s*["']([^"']*)["']/.exec(body)?.[1];
    if (encoding !== undefined && !/^utf-?8$/i.test(encoding)) {
      throw new XmlError(this.#line, `encoding "${encoding}" is not supported; sitemaps are UTF-8`);
    }
  }

  #resolve(qname: string, scope: Map<string, string>, attribute: boolean): { ns: string; local: string } {
    const colon = qname.indexOf(":");
    if (colon === -1) return { ns: attribute ? "" : (scope.get("") ?? ""), local: qname };
    const prefix = qname.slice(0, colon);
    const ns = prefix === "xml" ? XML_NS : scope.get(prefix);
    // An undeclared prefix is an error for a namespace-aware parser; keep it identifiable instead.
    return { ns: ns ?? `urn:undeclared-prefix:${prefix}`, local: qname.slice(colon + 1) };
  }

  #startTag(content: string): void {
    const selfClosing = content.endsWith("/");
    const body = selfClosing ? content.slice(0, -1) : content;
    const nameEnd = body.search(/[\s]/);
    const qname = nameEnd === -1 ? body : body.slice(0, nameEnd);
    if (!NAME.test(qname)) throw new XmlError(this.#line, `malformed start tag <${content.slice(0, 40)}>`);
    if (this.#rootClosed) throw new XmlError(this.#line, `<${qname}> after the root element was closed`);
    const attrs = new Map<string, string>();
    let error: string | undefined;
    let at = nameEnd === -1 ? body.length : nameEnd;
    ATTRIBUTE.lastIndex = at;
    for (let m = ATTRIBUTE.exec(body); m !== null; m = ATTRIBUTE.exec(body)) {
      const decoded = decodeEntities(m[2] ?? m[3] ?? "");
      if (decoded.error !== undefined) error ??= `attribute ${m[1]}: ${decoded.error}`;
      if (attrs.has(m[1]!)) throw new XmlError(this.#line, `attribute ${m[1]} appears twice on <${qname}>`);
      attrs.set(m[1]!, decoded.text);
      at = ATTRIBUTE.lastIndex;
    }
    if (body.slice(at).trim() !== "") throw new XmlError(this.#line, `malformed attributes on <${qname}>: ${JSON.stringify(body.slice(at, at + 40).trim())}`);

    const parent = this.#stack[this.#stack.length - 1];
    let scope = parent?.scope ?? new Map<string, string>();
    let copied = parent === undefined;
    for (const [name, value] of attrs) {
      if (name === "xmlns" || name.startsWith("xmlns:")) {
        if (!copied) {
          scope = new Map(scope);
          copied = true;
        }
        scope.set(name === "xmlns" ? "" : name.slice(6), value);
      }
    }
    const { ns, local } = this.#resolve(qname, scope, false);
    const event: XmlStart = { kind: "start", ns, local, attrs, line: this.#line };
    if (error !== undefined) event.error = error;
    this.#events.push(event);
    this.#rootSeen = true;
    if (selfClosing) {
      this.#events.push({ kind: "end", ns, local, line: this.#line });
      if (this.#stack.length === 0) this.#rootClosed = true;
    } else {
      this.#stack.push({ qname, ns, local, scope });
    }
  }

  #endTag(qname: string): void {
    const open = this.#stack.pop();
    if (open === undefined) throw new XmlError(this.#line, `</${qname}> closes nothing`);
    if (open.qname !== qname) throw new XmlError(this.#line, `</${qname}> does not close <${open.qname}>`);
    this.#events.push({ kind: "end", ns: open.ns, local: open.local, line: this.#line });
    if (this.#stack.length === 0) this.#rootClosed = true;
  }
}

/** Index of the ">" ending a tag that starts at buf[from], skipping quoted attribute values; -1 if incomplete. */
function tagEnd(buf: string, from: number): number {
  let quote = 0;
  for (let i = from; i < buf.length; i++) {
    const c = buf.charCodeAt(i);
    if (quote !== 0) {
      if (c === quote) quote = 0;
    } else if (c === 0x3e) {
      return i;
    } else if (c === 0x22 || c === 0x27) {
      quote = c;
    }
  }
  return -1;
}
