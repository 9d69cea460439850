/**
 * partitions.lock.json, beside wrangler.jsonc: each site's database list as deployed (one database too)
 * (binding, database_name, database_id, in partition order), per Worker. `npm run deploy` writes it
 * after a deploy and its migrations succeed; `npm run check-config` and `npm run deploy` read it
 * before anything is deployed. Commit it with wrangler.jsonc.
 *
 * Offline, nothing can read a remote database's identity (src/partitions/identity.ts). A database
 * is known here by its database_id in wrangler.jsonc, or by its database_name before the first
 * deploy provisions an id. A list that keeps every recorded database in its place passes, with
 * databases appended or bindings renamed. One that reorders, repoints, replaces or drops one is
 * refused with the run-time check's message (`checkDatabaseList`).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { unstable_readConfig } from "wrangler";
import { parseConfig } from "../src/config.ts";
import { type ListedDatabase, checkDatabaseList } from "../src/partitions/identity.ts";
import { type ConfigSources, deploymentVars } from "./local-config.ts";

const LOCK_FILE = "partitions.lock.json";

interface LockedDatabase {
  binding: string;
  database_name: string | null;
  database_id: string | null;
}

/** Per Worker (its name, per environment), per site: its databases in partition order. */
interface Lock {
  workers: Record<string, Record<string, LockedDatabase[]>>;
}

/** A `d1_databases` entry of wrangler.jsonc. */
interface DeclaredDatabase {
  binding: string;
  database_name?: string;
  database_id?: string;
}

/** What the deploy would run with: the Worker's name, its sites, and each site's databases in order. */
interface Deployment {
  worker: string;
  sites: ReadonlyMap<string, readonly LockedDatabase[]>;
}

/** How a database is known offline: its id once provisioned, before that its name. */
const listed = (d: LockedDatabase): ListedDatabase => ({ binding: d.binding, id: d.database_id ?? d.database_name ?? `undeclared ${d.binding}` });

/**
 * A problem line per recorded site whose list does not keep its recorded databases in their
 * places. A site no longer in SITES is not served, and not checked.
 */
function lockProblems(lock: Lock | null, deployment: Deployment): string[] {
  const recorded = lock?.workers[deployment.worker] ?? {};
  const out: string[] = [];
  for (const [origin, databases] of Object.entries(recorded)) {
    const current = deployment.sites.get(origin);
    if (!current) continue;
    const check = checkDatabaseList(origin, databases.map(listed), current.map(listed));
    if (check.state === "problem") out.push(`configuration error: ${check.problem} (the list deployed last is in ${LOCK_FILE})`);
  }
  return out;
}

/**
 * The lock after a deploy: every site's list as deployed, one-database sites included (their one
 * database, DB when unlisted, is their first partition's: relisting it second or leaving it out is a
 * reorder or a drop from the first deploy on); sites no longer listed keep their record.
 */
function lockedAfter(lock: Lock | null, deployment: Deployment): Lock {
  const sites = { ...lock?.workers[deployment.worker] };
  for (const [origin, databases] of deployment.sites) sites[origin] = [...databases];
  return { workers: { ...lock?.workers, [deployment.worker]: sites } };
}

const lockPath = (sources: ConfigSources): string => join(dirname(sources.configPath ?? "wrangler.jsonc"), LOCK_FILE);

function readLock(sources: ConfigSources): Lock | null {
  const path = lockPath(sources);
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Lock) : null;
}

/** The deployment wrangler.jsonc (and the variables) describe; null when the variables are bad (check-config names them). */
function deploymentOf(sources: ConfigSources): Deployment | null {
  const config = unstable_readConfig({ config: sources.configPath ?? "wrangler.jsonc", ...(sources.env ? { env: sources.env } : {}) });
  let parsed: ReturnType<typeof parseConfig>;
  try {
    parsed = parseConfig(deploymentVars(sources));
  } catch {
    return null;
  }
  const declared = new Map<string, DeclaredDatabase>(config.d1_databases.map((d: DeclaredDatabase) => [d.binding, d]));
  const sites = new Map<string, LockedDatabase[]>();
  for (const origin of parsed.sites) {
    const bindings = parsed.siteDatabases.get(origin) ?? ["DB"];
    sites.set(
      origin,
      bindings.map((binding) => ({
        binding,
        database_name: declared.get(binding)?.database_name ?? null,
        database_id: declared.get(binding)?.database_id ?? null,
      })),
    );
  }
  return { worker: config.name ?? "worker", sites };
}

/** `npm run check-config` and `npm run deploy`: the lock's problems with the configuration (none without a lock). */
export function databaseListProblems(sources: ConfigSources = {}): string[] {
  const lock = readLock(sources);
  const deployment = lock && deploymentOf(sources);
  return deployment ? lockProblems(lock, deployment) : [];
}

/**
 * After a deploy: records each site's list, with the ids the deploy provisioned (read again from
 * wrangler.jsonc). The path written, or null when the variables are bad.
 */
export function recordDeployedLists(sources: ConfigSources = {}): string | null {
  const lock = readLock(sources);
  const deployment = deploymentOf(sources);
  if (!deployment) return null;
  const path = lockPath(sources);
  writeFileSync(path, `${JSON.stringify(lockedAfter(lock, deployment), null, 2)}\n`);
  return path;
}
