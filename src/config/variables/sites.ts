/** Sites, sections and shards: which origins are served, where records and manifests live, how shards are cut. */
import { z } from "zod";
import { MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP, DEFAULT_SECTION as SECTION_DEFAULT, SECTION_PATTERN } from "../../core/limits.ts";
import { SECTION_RULES_RULE, type SectionRule, parseSectionRules } from "../../core/section-rules.ts";
import { normalizeOrigin } from "../../core/url.ts";
import { flag, listVar, oneOf, variable, wholeNumber } from "../variable.ts";

/** A list of origins; an entry that is not one is named by its position, never by its text. */
function origins(rule: string) {
  return z.string().transform((text, ctx) => {
    const set = new Set<string>();
    for (const [i, raw] of listVar(text).entries()) {
      const origin = normalizeOrigin(raw);
      if (origin === null) {
        ctx.addIssue({ code: "custom", message: `${rule} (entry ${i + 1} is not an http(s) origin)` });
        return z.NEVER;
      }
      set.add(origin);
    }
    return set as ReadonlySet<string>;
  });
}

const SITES_RULE = 'must list at least one origin, e.g. "https://example.com"';
export const SITES = variable({
  name: "SITES",
  presence: "required",
  schema: origins('must list http(s) origins like "https://example.com"').refine((set) => set.size > 0, { message: SITES_RULE }),
  default: null,
  rule: SITES_RULE,
});
export const DEFAULT_SECTION = variable({
  name: "DEFAULT_SECTION",
  presence: "default",
  schema: z.string().regex(SECTION_PATTERN),
  default: SECTION_DEFAULT,
  rule: 'must be lowercase letters, digits, "-" or "_" (≤ 64)',
});
export const SECTION_RULES = variable({
  name: "SECTION_RULES",
  presence: "default",
  schema: z.string().transform((text, ctx) => {
    const rules = parseSectionRules(text);
    if (rules === null) {
      ctx.addIssue({ code: "custom", message: SECTION_RULES_RULE });
      return z.NEVER;
    }
    return rules as readonly SectionRule[];
  }),
  default: "",
  rule: SECTION_RULES_RULE,
});
export const MAX_URLS_PER_SHARD = wholeNumber({
  name: "MAX_URLS_PER_SHARD",
  default: MAX_URLS_PER_SITEMAP,
  min: 1,
  max: MAX_URLS_PER_SITEMAP,
});
export const MAX_BYTES_PER_SHARD = wholeNumber({
  name: "MAX_BYTES_PER_SHARD",
  default: MAX_SITEMAP_BYTES,
  min: 1024,
  max: MAX_SITEMAP_BYTES,
});
export const INDEX_LINK_FORM = oneOf({
  name: "INDEX_LINK_FORM",
  allowed: ["xml", "xml.gz"],
  default: "xml",
});
export const LASTMOD_DATE_ONLY = flag({
  name: "LASTMOD_DATE_ONLY",
  default: false,
});
export const DATE_ONLY_SITES = variable({
  name: "DATE_ONLY_SITES",
  presence: "default",
  schema: origins("must list origins that are also in SITES"),
  default: "",
  rule: "must list origins that are also in SITES",
});
export const URL_SOURCE = oneOf({
  name: "URL_SOURCE",
  allowed: ["d1", "kv"],
  default: "d1",
});
const SITE_DATABASES_RULE = 'must list "origin=BINDING" pairs (a D1 binding name per site in SITES), e.g. "https://a.example=DB_A"';
/** D1 binding names: what wrangler accepts as a JavaScript identifier for a binding. */
const BINDING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const SITE_DATABASES = variable({
  name: "SITE_DATABASES",
  presence: "default",
  schema: z.string().transform((text, ctx) => {
    const map = new Map<string, string>();
    for (const [i, pair] of listVar(text).entries()) {
      const eq = pair.lastIndexOf("=");
      const origin = eq > 0 ? normalizeOrigin(pair.slice(0, eq)) : null;
      const binding = pair.slice(eq + 1);
      if (origin === null || !BINDING_NAME.test(binding) || map.has(origin)) {
        ctx.addIssue({ code: "custom", message: `${SITE_DATABASES_RULE} (entry ${i + 1} is not one, or repeats a site)` });
        return z.NEVER;
      }
      map.set(origin, binding);
    }
    return map as ReadonlyMap<string, string>;
  }),
  default: "",
  rule: SITE_DATABASES_RULE,
});
export const MANIFEST_STORE = oneOf({
  name: "MANIFEST_STORE",
  allowed: ["d1", "kv"],
  default: "d1",
});
