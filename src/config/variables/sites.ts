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
/** Registered sites' settings that name hosts may name any host (docs/tenants.md "Settings that name hosts"). */
export const SITE_SETTINGS_ANY_HOST = flag({ name: "SITE_SETTINGS_ANY_HOST", default: false });
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
const SITE_DATABASES_RULE =
  'must list "origin=BINDING" pairs (D1 binding names per site in SITES; several, comma separated, spread one site over several databases), e.g. "https://a.example=DB_A https://big.example=DB_1,DB_2"';
/** D1 binding names: what wrangler accepts as a JavaScript identifier for a binding. */
const BINDING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Partitions of one site at most: keys and shard numbers of each partition live in their own range (src/partitions/keys.ts). */
const MAX_PARTITIONS = 64;
export const SITE_DATABASES = variable({
  name: "SITE_DATABASES",
  presence: "default",
  schema: z.string().transform((text, ctx) => {
    // Pairs are separated like every list (spaces or commas); a word without "=" is one more binding of the pair before it.
    const pairs: string[][] = [];
    for (const word of listVar(text)) {
      if (word.includes("=") || pairs.length === 0) pairs.push([word]);
      else pairs[pairs.length - 1]!.push(word);
    }
    const map = new Map<string, readonly string[]>();
    for (const [i, [pair, ...more]] of pairs.entries()) {
      const eq = pair!.lastIndexOf("=");
      const origin = eq > 0 ? normalizeOrigin(pair!.slice(0, eq)) : null;
      const bindings = [pair!.slice(eq + 1), ...more];
      const ok = bindings.length <= MAX_PARTITIONS && bindings.every((b) => BINDING_NAME.test(b)) && new Set(bindings).size === bindings.length;
      if (origin === null || !ok || map.has(origin)) {
        ctx.addIssue({
          code: "custom",
          message: `${SITE_DATABASES_RULE} (entry ${i + 1} is not one, repeats a site or a binding, or lists more than ${MAX_PARTITIONS})`,
        });
        return z.NEVER;
      }
      map.set(origin, bindings);
    }
    return map as ReadonlyMap<string, readonly string[]>;
  }),
  default: "",
  rule: SITE_DATABASES_RULE,
});
export const MANIFEST_STORE = oneOf({
  name: "MANIFEST_STORE",
  allowed: ["d1", "kv"],
  default: "d1",
});
/**
 * What the per-invocation meter (src/jobs/meter.ts) does past a limit: "count" (the default, what a
 * deployment runs) logs it and refuses nothing, as the platform enforces its own limits there and the
 * meter reads them more strictly than the platform may; "enforce" (the tests) refuses the call as
 * production would, because the local runtime enforces none of them (docs/capacity.md "Limits").
 */
export const INVOCATION_LIMITS = oneOf({
  name: "INVOCATION_LIMITS",
  allowed: ["count", "enforce"],
  default: "count",
});
