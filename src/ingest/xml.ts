/**
 * Streaming XML for sitemaps, on saxes: text goes in chunk by chunk (any split, even inside a tag
 * or a reference), events come out with the line they start on. Memory is bounded by the longest
 * single tag or text node (MAX_TOKEN_CHARS), never by the document.
 *
 * A DOCTYPE is refused (no entity expansion, no external entities); only UTF-8 is read.
 * Structural errors (unclosed or mismatched tags) throw XmlError with the line; a bad reference in
 * a text or attribute value (checked by xml-references.ts) marks just that event with `error`, so
 * the record containing it can be reported and the rest of the file still read.
 */
import { type SaxesOptions, SaxesParser, type SaxesTagNS } from "saxes";
import { ReferenceChecker } from "./xml-references.ts";

interface XmlStart {
  kind: "start";
  /** Namespace URI ("" when none). */
  ns: string;
  local: string;
  /** Attributes by qualified name as written (xmlns declarations included), entity-decoded. */
  attrs: Map<string, string>;
  line: number;
  /** Set when an attribute value had a bad reference. */
  error?: string;
}

interface XmlEnd {
  kind: "end";
  ns: string;
  local: string;
  line: number;
}

interface XmlText {
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
const MAX_TOKEN_CHARS = 1 << 20;

type Options = SaxesOptions & { xmlns: true; position: true };

/** saxes' complaints that do not stop the reading (namespaces are kept identifiable instead). */
const HARMLESS = /^unbound namespace prefix|XML declaration must (be|appear) at the start/;

/** saxes' complaints about one text or tag: the entry holding it is reported, the file read on. */
const ENTRY_PROBLEMS: ReadonlyMap<string, string> = new Map([
  ["disallowed character.", "a character that XML does not allow (a control character?)"],
  ['the string "]]>" is disallowed in char data.', '"]]>" must be escaped as ]]&gt; in XML text'],
]);

interface Open {
  name: string;
  ns: string;
}

export class XmlEvents {
  readonly #parser = new SaxesParser<Options>({ xmlns: true, position: true });
  readonly #references = new ReferenceChecker();
  #events: XmlEvent[] = [];
  readonly #open: Open[] = [];
  /** Name of the start tag being read (for saxes' attribute errors). */
  #opening = "";
  /** Line where the current text or tag starts (just after the previous event). */
  #startLine = 1;
  /** Stream position of the last event: what lies after it is being buffered. */
  #lastEventAt = 0;
  #rootSeen = false;
  /** A close tag that did not match: saxes closes the open elements first, then the one named. */
  #mismatch: { open: string; written?: string; line: number } | undefined;
  #lastClosed = "";
  /** A non-fatal complaint of saxes, for the next event. */
  #entryError: string | undefined;

  constructor() {
    const p = this.#parser;
    p.on("error", (err) => this.#error(err.message.replace(/^\d+:\d+: /, "")));
    p.on("xmldecl", (decl) => {
      if (decl.encoding !== undefined && !/^utf-?8$/i.test(decl.encoding)) {
        throw new XmlError(p.line, `encoding "${decl.encoding}" is not supported; sitemaps are UTF-8`);
      }
      this.#mark();
    });
    p.on("doctype", () => {
      throw new XmlError(p.line, "DOCTYPE and DTD declarations are not accepted in a sitemap");
    });
    p.on("comment", () => this.#mark());
    p.on("processinginstruction", () => this.#mark());
    p.on("opentagstart", (tag) => {
      this.#settle();
      this.#opening = tag.name;
      this.#startLine = p.line;
    });
    p.on("opentag", (tag) => this.#start(tag));
    p.on("closetag", (tag) => this.#end(tag));
    p.on("text", (text) => this.#text(text));
    p.on("cdata", (text) => this.#text(text));
  }

  /** Current line (where the unconsumed input starts). */
  get line(): number {
    return this.#parser.line;
  }

  /** Feeds the next piece of text; returns the events it completed. */
  feed(chunk: string): XmlEvent[] {
    this.#parser.write(this.#references.check(chunk));
    this.#settle();
    if (this.#parser.position - this.#lastEventAt > MAX_TOKEN_CHARS) {
      throw new XmlError(this.#parser.line, `markup or text longer than ${MAX_TOKEN_CHARS} characters`);
    }
    return this.#take();
  }

  /** Signals the end of input; throws if the document is incomplete. */
  end(): XmlEvent[] {
    const rest = this.#references.check("", true);
    if (rest !== "") this.#parser.write(rest);
    this.#parser.close();
    this.#settle();
    return this.#take();
  }

  #take(): XmlEvent[] {
    const events = this.#events;
    this.#events = [];
    return events;
  }

  #mark(): void {
    this.#lastEventAt = this.#parser.position;
    this.#startLine = this.#parser.line;
  }

  /** saxes' errors as this reader's: most stop the reading. */
  #error(message: string): void {
    const line = this.#parser.line;
    if (HARMLESS.test(message)) return;
    if (message === "unexpected close tag.") {
      this.#mismatch ??= { open: this.#lastClosed, line };
      delete this.#mismatch.written;
      return;
    }
    const unmatched = /^unmatched closing tag: (.*)\.$/.exec(message);
    if (unmatched) {
      // saxes has closed every open element looking for it: the first one is what it failed to close.
      const open = this.#mismatch?.open;
      throw new XmlError(line, open === undefined ? `</${unmatched[1]}> closes nothing` : `</${unmatched[1]}> does not close <${open}>`);
    }
    const entryProblem = ENTRY_PROBLEMS.get(message);
    if (entryProblem !== undefined) {
      this.#entryError ??= entryProblem;
      return;
    }
    const unclosed = /^unclosed tag: (.*)$/.exec(message);
    if (unclosed) throw new XmlError(line, `unexpected end of input: <${unclosed[1]}> is not closed`);
    if (message.startsWith("document must contain a root element")) throw new XmlError(line, "no root element: the input is empty or not XML");
    if (message.startsWith("documents may contain only one root")) throw new XmlError(line, `<${this.#opening}> after the root element was closed`);
    if (message.startsWith("text data outside of root node")) {
      throw new XmlError(line, this.#rootSeen ? "text after the root element" : "text before the root element");
    }
    const duplicate = /^duplicate attribute: (.*)\.$/.exec(message);
    if (duplicate) throw new XmlError(line, `attribute ${duplicate[1]} appears twice on <${this.#opening}>`);
    throw new XmlError(line, message.replace(/\.$/, ""));
  }

  /** Throws a pending mismatch once saxes has reached the element the close tag named. */
  #settle(): void {
    const m = this.#mismatch;
    if (m?.written !== undefined) throw new XmlError(m.line, `</${m.written}> does not close <${m.open}>`);
  }

  /** The first problem in what the current event spans. */
  #takeError(): string | undefined {
    const error = this.#references.takeBefore(this.#parser.position) ?? this.#entryError;
    this.#entryError = undefined;
    return error;
  }

  #start(tag: SaxesTagNS): void {
    const attrs = new Map<string, string>();
    for (const [name, attribute] of Object.entries(tag.attributes)) attrs.set(name, attribute.value);
    // An undeclared prefix is an error for a namespace-aware parser; keep it identifiable instead.
    const ns = tag.prefix !== "" && this.#parser.resolve(tag.prefix) === undefined ? `urn:undeclared-prefix:${tag.prefix}` : tag.uri;
    const event: XmlStart = { kind: "start", ns, local: tag.local, attrs, line: this.#startLine };
    const error = this.#takeError();
    if (error !== undefined) event.error = error;
    this.#events.push(event);
    this.#rootSeen = true;
    this.#open.push({ name: tag.name, ns });
    this.#mark();
  }

  #end(tag: SaxesTagNS): void {
    this.#settle();
    if (this.#mismatch !== undefined) {
      this.#mismatch.written = tag.name;
      return;
    }
    const open = this.#open.pop();
    this.#lastClosed = tag.name;
    this.#events.push({ kind: "end", ns: open?.ns ?? tag.uri, local: tag.local, line: this.#parser.line });
    this.#mark();
  }

  #text(text: string): void {
    this.#settle();
    const line = this.#startLine;
    if (text.length > MAX_TOKEN_CHARS) throw new XmlError(line, `text longer than ${MAX_TOKEN_CHARS} characters`);
    const error = this.#takeError();
    this.#mark();
    if (text.trim() === "" && error === undefined) return;
    const event: XmlText = { kind: "text", text, line };
    if (error !== undefined) event.error = error;
    this.#events.push(event);
  }
}
