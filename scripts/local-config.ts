/**
 * The variables a deployment will run with, read the way wrangler reads them: `vars` of
 * wrangler.jsonc (or of one of its `env` sections), then `.dev.vars` (local secrets), then the
 * process environment for declared names (a CI secret store). Used by `npm run check-config` and
 * by `npm start`'s refusal to run a configuration that production would only partly serve.
 */
import { existsSync, readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { unstable_readConfig } from "wrangler";
import { VARIABLES } from "../src/config/variables/index.ts";
import { type ConfigError, checkConfig } from "../src/config.ts";

export interface ConfigSources {
  /** wrangler.jsonc by default. */
  configPath?: string;
  /** A wrangler environment (`--env`). */
  env?: string;
  /** `.dev.vars` by default; null: none. */
  devVarsPath?: string | null;
  /** `--env-file` paths: when given, read instead of `.dev.vars` (as wrangler does). */
  envFiles?: readonly string[];
  /** Overrides, e.g. `--var NAME:VALUE` given to wrangler. */
  overrides?: Readonly<Record<string, string>>;
  processEnv?: NodeJS.ProcessEnv;
}

export function deploymentVars(sources: ConfigSources = {}): Record<string, string> {
  const config = unstable_readConfig({ config: sources.configPath ?? "wrangler.jsonc", ...(sources.env ? { env: sources.env } : {}) });
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.vars ?? {})) vars[name] = typeof value === "string" ? value : JSON.stringify(value);
  const devVars = sources.devVarsPath === undefined ? ".dev.vars" : sources.devVarsPath;
  const secretFiles = sources.envFiles?.length ? sources.envFiles : devVars === null ? [] : [devVars];
  for (const file of secretFiles) if (existsSync(file)) Object.assign(vars, parseEnv(readFileSync(file, "utf8")));
  const processEnv = sources.processEnv ?? process.env;
  for (const { name } of VARIABLES) {
    const value = processEnv[name];
    if (value !== undefined) vars[name] = value;
  }
  return { ...vars, ...sources.overrides };
}

/** Every problem of the deployment's configuration: each names the variable and its rule, never the value. */
export function configProblems(sources: ConfigSources = {}): ConfigError[] {
  return checkConfig(deploymentVars(sources));
}
