/** One element of an entry, as the entry readers (sitemap-xml.ts, feed-xml.ts) assemble it. */
export interface XmlNode {
  ns: string;
  local: string;
  attrs: Map<string, string>;
  line: number;
  text: string;
  children: XmlNode[];
  /** A bad reference in this element's own text or attributes (the entry is reported or not by what it uses). */
  error?: string;
}

/** Reports something that is not imported: its kind (display name), line, and why (default: no field for it). */
export type DroppedHandler = (kind: string, line: number, why?: string) => void;
