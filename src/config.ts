/**
 * Typed configuration, validated once per `env` object. A bad variable becomes a ConfigError that
 * names the variable and what it should be; the Worker answers 500 with that message.
 */
import { DEFAULT_SECTION, MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP, SECTION_PATTERN } from "./core/limits.ts";
import { normalizeOrigin } from "./core/url.ts";

export type IndexLinkForm = "xml" | "xml.gz";

export interface Config {
  /** Origins served (e.g. `https://example.com`); any other host gets 404. */
  sites: ReadonlySet<string>;
  defaultSection: string;
  maxUrlsPerShard: number;
  maxBytesPerShard: number;
  indexLinkForm: IndexLinkForm;
  /** Emit `<lastmod>` as dates only. */
  lastmodDateOnly: boolean;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`configuration error: ${variable} ${message}`);
    this.variable = variable;
  }
}

type RawEnv = Record<string, unknown>;

function text(env: RawEnv, name: string): string | undefined {
  const value = env[name];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new ConfigError(name, `must be a string, got ${typeof value}`);
  return value.trim();
}

function integer(env: RawEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got ${value}`);
  return value;
}

function oneOf<T extends string>(env: RawEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.map((a) => `"${a}"`).join(", ")}, got "${raw}"`);
  }
  return raw as T;
}

function boolean(env: RawEnv, name: string, fallback: boolean): boolean {
  const raw = oneOf(env, name, ["true", "false", "1", "0"] as const, fallback ? "true" : "false");
  return raw === "true" || raw === "1";
}

/** Splits a list var on commas and/or whitespace. */
export function listVar(raw: string | undefined): string[] {
  return raw ? raw.split(/[\s,]+/).filter(Boolean) : [];
}

export function parseConfig(env: RawEnv): Config {
  const siteList = listVar(text(env, "SITES"));
  if (siteList.length === 0) throw new ConfigError("SITES", 'must list at least one origin, e.g. "https://example.com"');
  const sites = new Set<string>();
  for (const raw of siteList) {
    const origin = normalizeOrigin(raw);
    if (!origin) throw new ConfigError("SITES", `has "${raw}", which is not an http(s) origin like "https://example.com"`);
    sites.add(origin);
  }
  const defaultSection = text(env, "DEFAULT_SECTION") ?? DEFAULT_SECTION;
  if (!SECTION_PATTERN.test(defaultSection)) {
    throw new ConfigError("DEFAULT_SECTION", `must be lowercase letters, digits, "-" or "_" (≤ 64), got "${defaultSection}"`);
  }
  return {
    sites,
    defaultSection,
    maxUrlsPerShard: integer(env, "MAX_URLS_PER_SHARD", MAX_URLS_PER_SITEMAP, 1, MAX_URLS_PER_SITEMAP),
    maxBytesPerShard: integer(env, "MAX_BYTES_PER_SHARD", MAX_SITEMAP_BYTES, 1024, MAX_SITEMAP_BYTES),
    indexLinkForm: oneOf(env, "INDEX_LINK_FORM", ["xml", "xml.gz"] as const, "xml"),
    lastmodDateOnly: boolean(env, "LASTMOD_DATE_ONLY", false),
  };
}

const cache = new WeakMap<object, Config>();

/** Parses once per env object (one per isolate in production). Throws ConfigError. */
export function loadConfig(env: object): Config {
  let config = cache.get(env);
  if (!config) {
    config = parseConfig(env as RawEnv);
    cache.set(env, config);
  }
  return config;
}
