/**
 * A registered site's settings (src/registry/store.ts): which variables a site may set for itself,
 * and the env its services are wired from — the deployment's env with the site's values over it,
 * read by the same declarations (src/config/variables/) as the variables themselves, so a setting
 * is valid exactly when the same variable would be. Deployment-wide variables (tokens, limits,
 * caching, the crawler ranges) and bindings stay the deployment's.
 */
import { checkConfig, parseConfig } from "../config/parse.ts";
import type { Config } from "../config/types.ts";
import { readVariable } from "../config/variable.ts";
import { SITES, SITE_SETTINGS_ANY_HOST } from "../config/variables/index.ts";
import { hostProblems } from "./hosts.ts";
import { platformHosts, siteHost, takenHosts } from "./own-host.ts";

/** The variables a registered site may set, each read as the variable of that name (README). */
const SITE_VARIABLES = [
  "DEFAULT_SECTION",
  "SECTION_RULES",
  "MAX_URLS_PER_SHARD",
  "MAX_BYTES_PER_SHARD",
  "INDEX_LINK_FORM",
  "LASTMOD_DATE_ONLY",
  "BROWSER_VIEW",
  "FEED_SIZE",
  "FEED_IN_INDEX",
  "MIRROR_SITEMAPS",
  "ROBOTS_ORIGIN_URL",
  "INDEXNOW_KEY",
  "PING_URLS",
  "GSC_PROPERTY",
] as const;

/** The setting that names the D1 binding holding the site's records (default `DB`); one database per registered site. */
export const DATABASE_SETTING = "DATABASE";

const ALLOWED = new Set<string>([...SITE_VARIABLES, DATABASE_SETTING]);

/** A setting the registry refuses: which, and why (never its value). */
export interface SettingProblem {
  setting: string;
  rule: string;
}

/** The env a registered site's services are wired from: the deployment's, its settings over it, itself the only site, its database as `DB`. */
export function registeredSiteEnv(env: object, origin: string, settings: Readonly<Record<string, string>>): Record<string, unknown> {
  const raw = env as Record<string, unknown>;
  const out: Record<string, unknown> = { ...raw, SITES: origin, SITE_DATABASES: "", DATE_ONLY_SITES: "" };
  // A per-site variable the site does not set is its default, never the deployment's value: the
  // deployment's mirrors, IndexNow key or Search Console property are its own sites', not every tenant's.
  for (const name of SITE_VARIABLES) delete out[name];
  for (const [name, value] of Object.entries(settings)) if (name !== DATABASE_SETTING && ALLOWED.has(name)) out[name] = value;
  const database = settings[DATABASE_SETTING] ?? "DB";
  out["DB"] = raw[database];
  return out;
}

/**
 * The configuration a registered site's services run on: its env (`registeredSiteEnv`) read as the
 * variables are, and its settings that name hosts checked again as they would be now, against the
 * hosts SITES serves and `registeredHosts` (the live registered sites' hosts, the isolate's list:
 * src/registry/resolve.ts): one the deployment no longer allows (SITE_SETTINGS_ANY_HOST turned off
 * since it was stored, a rule tightened, another site registered at the host it names) is read as a
 * bad value, so its feature is off for this site alone and its status names it
 * (`configuration.disabled`), the rest of the site unaffected. Throws ConfigError as parseConfig does.
 */
export function registeredSiteConfig(
  env: object,
  origin: string,
  settings: Readonly<Record<string, string>>,
  registeredHosts: ReadonlySet<string>,
): Config {
  const taken = takenHosts(siteHost(origin), sitesHosts(env), registeredHosts);
  const refused = new Map(hostProblems(origin, settings, anyHost(env), taken).map((p) => [p.setting, p.rule]));
  return parseConfig(registeredSiteEnv(env, origin, settings), refused);
}

/** SITE_SETTINGS_ANY_HOST of the deployment; a value that does not read is its default (off: the safe side). */
function anyHost(env: object): boolean {
  try {
    return readVariable(env, SITE_SETTINGS_ANY_HOST);
  } catch {
    return false;
  }
}

/** The hosts the deployment's SITES serves; none when SITES does not read (the deployment then serves nothing: its own error says so). */
function sitesHosts(env: object): ReadonlySet<string> {
  try {
    return platformHosts(readVariable(env, SITES));
  } catch {
    return new Set();
  }
}

/**
 * What is wrong with `settings` for a site at `origin`: unknown names, an unbound database, any variable its declaration
 * refuses, a host another site has (`registeredHosts`: the live registered sites' hosts; SITES' from `env`).
 */
export function settingsProblems(
  env: object,
  origin: string,
  settings: Readonly<Record<string, string>>,
  registeredHosts: ReadonlySet<string>,
): SettingProblem[] {
  const problems: SettingProblem[] = [];
  for (const name of Object.keys(settings)) {
    if (!ALLOWED.has(name)) problems.push({ setting: name, rule: `is not a per-site setting (allowed: ${[...ALLOWED].join(", ")})` });
  }
  const database = settings[DATABASE_SETTING];
  if (database !== undefined) {
    const bound = (env as Record<string, unknown>)[database];
    if (!/^[A-Z][A-Z0-9_]*$/.test(database) || typeof bound !== "object" || bound === null || !("prepare" in bound)) {
      problems.push({ setting: DATABASE_SETTING, rule: "must name a D1 database bound to this Worker" });
    }
  }
  // Settings that name hosts, held to the site's own domain (src/registry/hosts.ts), named with the rest.
  problems.push(...hostProblems(origin, settings, anyHost(env), takenHosts(siteHost(origin), sitesHosts(env), registeredHosts)));
  // The deployment's own problems are not the site's: only its origin's and its settings' count.
  const own = (checked: Readonly<Record<string, string>>): SettingProblem[] =>
    checkConfig(registeredSiteEnv(env, origin, checked))
      .filter((e) => e.variable === "SITES" || Object.hasOwn(checked, e.variable))
      .map((e) => ({ setting: e.variable === "SITES" ? "origin" : e.variable, rule: e.rule }));
  // Each setting on its own first: parsing stops at a feature's (or the core's) first bad variable,
  // and every bad setting is to be named, not only the first (at most one parse per allowed name).
  const seen = new Set(problems.map((p) => `${p.setting}\n${p.rule}`));
  for (const [name, value] of Object.entries(settings)) {
    if (name === DATABASE_SETTING || !ALLOWED.has(name)) continue;
    for (const problem of own({ [name]: value })) {
      const key = `${problem.setting}\n${problem.rule}`;
      if (!seen.has(key)) problems.push(problem);
      seen.add(key);
    }
  }
  if (problems.length > 0) return problems;
  // Then together, for the rules between variables: a site is registered only whole.
  return own(settings);
}
