/** Helpers of the import CLI tests: run the CLI as a child process, start the real Worker. */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type TestHarness, createTestHarness } from "wrangler";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const FIXTURES = fileURLToPath(new URL("../fixtures/import/", import.meta.url));
export const TOKEN = "import-e2e-token";

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node scripts/import.ts …` with the project's Node, in the project root; never inherits ADMIN_TOKEN. */
export function runCli(args: string[], env: Record<string, string> = {}, cwd = ROOT): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const base = { ...process.env };
    delete base["ADMIN_TOKEN"];
    const child = spawn(`${ROOT}node_modules/.bin/node`, [`${ROOT}scripts/import.ts`, ...args], {
      cwd,
      env: { ...base, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The `--json` summary line of a run. */
export function summaryOf(run: CliRun): Record<string, unknown> & { exitCode: number } {
  const line = run.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line) as Record<string, unknown> & { exitCode: number };
  } catch {
    throw new Error(`no JSON summary on stdout (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

export interface RunningWorker {
  server: TestHarness;
  /** Where the Worker listens, e.g. http://127.0.0.1:41234 */
  origin: string;
}

/**
 * The real Worker (wrangler.jsonc) with in-memory storage, migrations applied, ADMIN_TOKEN set.
 * SITES gets the listening origin added, so admin requests sent to it are accepted; `sites` are
 * the other configured sites.
 */
export async function startWorker(sites: string[], vars: Record<string, string> = {}): Promise<RunningWorker> {
  const input = { configPath: "./wrangler.jsonc", vars: { ...vars, SITES: sites.join(" ") }, secrets: { ADMIN_TOKEN: TOKEN } };
  const server = createTestHarness({ root: ROOT, workers: [input] });
  try {
    const { url } = await server.listen();
    await server.update({ root: ROOT, workers: [{ ...input, vars: { ...input.vars, SITES: [...sites, url.origin].join(" ") } }] });
    const again = await server.listen();
    if (again.url.origin !== url.origin) throw new Error(`the harness moved from ${url.origin} to ${again.url.origin}`);
    await server.getWorker().applyD1Migrations("DB");
    return { server, origin: url.origin };
  } catch (err) {
    await server.close();
    throw err;
  }
}

/** `<loc>` texts of a sitemap document (entity-decoded). */
export function locsOf(xml: string): string[] {
  return [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) =>
    m[1]!.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"').replaceAll("&apos;", "'").replaceAll("&amp;", "&"),
  );
}
