/**
 * Every environment variable and secret of the Worker, declared once (name, rule in zod and in
 * words, default), one file per feature. The typed Config is built from these
 * (src/config/parse.ts), and a test checks the README's configuration tables, which describe
 * each one, against them (test/node/config-readme.test.ts). Test-only knobs are not declared here.
 *
 * A new variable is one `export const` in the file of its feature: `VARIABLES` finds it.
 */
import type { Variable } from "../variable.ts";
import * as access from "./access.ts";
import * as admin from "./admin.ts";
import * as caching from "./caching.ts";
import * as crawlers from "./crawlers.ts";
import * as formats from "./formats.ts";
import * as mirrors from "./mirrors.ts";
import * as notify from "./notify.ts";
import * as regeneration from "./regeneration.ts";
import * as robots from "./robots.ts";
import * as secrets from "./secrets.ts";
import * as sites from "./sites.ts";

export * from "./access.ts";
export * from "./admin.ts";
export * from "./caching.ts";
export * from "./crawlers.ts";
export * from "./formats.ts";
export * from "./mirrors.ts";
export * from "./notify.ts";
export * from "./regeneration.ts";
export * from "./robots.ts";
export * from "./secrets.ts";
export * from "./sites.ts";

function isVariable(value: unknown): value is Variable {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Partial<Variable>;
  return (
    typeof v.name === "string" && typeof v.rule === "string" && typeof v.presence === "string" && typeof v.secret === "boolean" && v.schema !== undefined
  );
}

/**
 * Every declared variable and secret: features in the README's order (a module's exports come
 * alphabetically; the README test compares sorted names).
 */
export const VARIABLES: readonly Variable[] = [sites, formats, caching, regeneration, admin, mirrors, notify, robots, access, crawlers, secrets].flatMap(
  (module) => Object.values(module).filter(isVariable),
);
