/**
 * `npm run check-config [-- --env NAME] [--config PATH] [--no-dev-vars]`: checks the configuration a deploy would
 * run with (wrangler.jsonc vars, `.dev.vars`, declared names from the environment) against every
 * variable's rule, and each partitioned site's SITE_DATABASES list against the one deployed last
 * (partitions.lock.json, scripts/partitions-lock.ts). Exit 0 when all is well; 1, with one line per
 * problem (variable and rule, never the value), when a variable would turn a feature off or stop
 * the sitemaps in production, or a list reorders, repoints, replaces or drops a database.
 */
import { type ConfigSources, configProblems } from "./local-config.ts";
import { databaseListProblems } from "./partitions-lock.ts";

const args = process.argv.slice(2);
const flagValue = (flag: string): string | undefined => {
  const at = args.indexOf(flag);
  return at >= 0 ? args[at + 1] : undefined;
};
const env = flagValue("--env");
const configPath = flagValue("--config");
const sources: ConfigSources = {
  ...(env ? { env } : {}),
  ...(configPath ? { configPath } : {}),
  ...(args.includes("--no-dev-vars") ? { devVarsPath: null } : {}),
};
const problems = [...configProblems(sources).map((p) => p.message), ...databaseListProblems(sources)];
if (problems.length === 0) {
  console.log(`configuration ok${env ? ` (env ${env})` : ""}`);
} else {
  for (const problem of problems) console.error(problem);
  console.error(`${problems.length} configuration problem${problems.length === 1 ? "" : "s"}: fix before deploying`);
  process.exit(1);
}
