/**
 * Section rules (SECTION_RULES): `section:/path-prefix/` pairs that give the section of a record
 * naming none. The first rule whose prefix starts the loc's path wins. A record that names no
 * section and matches no rule keeps the section it already has in the store (its shard stays
 * stable), else DEFAULT_SECTION: validation marks it `sectionDefaulted` and the store decides.
 */
import { SECTION_PATTERN } from "./limits.ts";

export interface SectionRule {
  section: string;
  /** Path prefix, starting with "/", compared with the loc's path (and query) as written. */
  prefix: string;
}

/** What a rule list must look like, in words (configuration errors quote it, never the value). */
export const SECTION_RULES_RULE = 'must be "section:/path-prefix/" pairs, comma or space separated, e.g. "products:/products/ blog:/blog/"';

/** Parses `products:/products/ blog:/blog/` (comma or space separated); null when any entry is malformed. */
export function parseSectionRules(text: string): SectionRule[] | null {
  const rules: SectionRule[] = [];
  for (const entry of text.split(/[\s,]+/)) {
    if (entry === "") continue;
    const colon = entry.indexOf(":");
    if (colon < 0) return null;
    const section = entry.slice(0, colon);
    const prefix = entry.slice(colon + 1);
    if (!SECTION_PATTERN.test(section) || !prefix.startsWith("/") || prefix.length > 1024) return null;
    rules.push({ section, prefix });
  }
  return rules;
}

/** The path (with query) of a normalised absolute loc: everything from the first "/" after the host. */
function pathOf(loc: string): string {
  const start = loc.indexOf("://") + 3;
  const slash = loc.indexOf("/", start);
  return slash < 0 ? "/" : loc.slice(slash);
}

/** The section the first matching rule gives a loc, or null when none matches. */
export function sectionByRule(rules: readonly SectionRule[], loc: string): string | null {
  if (rules.length === 0) return null;
  const path = pathOf(loc);
  for (const rule of rules) if (path.startsWith(rule.prefix)) return rule.section;
  return null;
}
