/** Wires adapters to config, once per `env`: the only place that knows which store backs what. */
import { type Config, loadConfig } from "./config.ts";
import { D1ManifestStore } from "./manifest/d1-store.ts";
import type { ManifestStore } from "./manifest/manifest.ts";
import { D1UrlSource } from "./sources/d1.ts";
import { FaultyUrlSource } from "./sources/faulty.ts";
import type { UrlSource } from "./sources/source.ts";

export interface Services {
  config: Config;
  source: UrlSource;
  manifests: ManifestStore;
}

const cache = new WeakMap<object, Services>();

/** Throws ConfigError for a bad variable. */
export function services(env: Env): Services {
  let s = cache.get(env);
  if (!s) {
    const config = loadConfig(env);
    let source: UrlSource = new D1UrlSource(env.DB);
    if (config.faultAfterRecords !== null) source = new FaultyUrlSource(source, config.faultAfterRecords);
    s = { config, source, manifests: new D1ManifestStore(env.DB) };
    cache.set(env, s);
  }
  return s;
}
