/**
 * Typed configuration, validated once per `env` object. Every variable is declared once in
 * src/config/variables.ts; a bad one becomes a ConfigError that names the variable and its rule
 * (never the value), and the Worker answers 500 with that message.
 */
import { parseConfig } from "./config/parse.ts";
import type { Config } from "./config/types.ts";

export { ConfigError } from "./config/error.ts";
export { parseConfig } from "./config/parse.ts";
export type { CacheConfig, Config } from "./config/types.ts";

const cache = new WeakMap<object, Config>();

/** Parses once per env object (one per isolate in production). Throws ConfigError. */
export function loadConfig(env: object): Config {
  let config = cache.get(env);
  if (!config) {
    config = parseConfig(env as Readonly<Record<string, unknown>>);
    cache.set(env, config);
  }
  return config;
}
