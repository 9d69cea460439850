/**
 * Typed configuration, validated once per `env` object. Every variable is declared once in
 * src/config/variables/; a bad core variable becomes a ConfigError that names the variable and its
 * rule (never the value), a bad feature variable turns that feature off (src/config/features.ts).
 */
import { parseConfig } from "./config/parse.ts";
import type { Config } from "./config/types.ts";

export { ConfigError } from "./config/error.ts";
export { checkConfig, parseConfig } from "./config/parse.ts";
export type { CacheConfig, Config } from "./config/types.ts";

const cache = new WeakMap<object, Config>();

/** Parses once per env object (one per isolate in production). Throws ConfigError. */
export function loadConfig(env: object): Config {
  let config = cache.get(env);
  if (!config) {
    config = parseConfig(env as Readonly<Record<string, unknown>>);
    cache.set(env, config);
    // Once per isolate: the variable and its rule (never the value) of each feature a bad variable turned off.
    for (const d of config.disabled) console.error(`configuration error: ${d.variable} ${d.rule} (${d.feature} is off)`);
  }
  return config;
}
