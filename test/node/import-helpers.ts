/** Helpers of the import CLI tests: run the CLI as a child process and read its summary. */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const FIXTURES = fileURLToPath(new URL("../fixtures/import/", import.meta.url));
export const TOKEN = "import-e2e-token-0123456789abcdef";

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `node scripts/import.ts …` with the project's Node, in the project root. It never inherits
 * ADMIN_TOKEN, and reads no .dev.vars (IMPORT_DEV_VARS=""): a developer's own, which `npm start`
 * writes into the project root, must not change what a test sees. A test may set either in `env`.
 */
export function runCli(args: string[], env: Record<string, string> = {}, cwd = ROOT): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const base = { ...process.env };
    delete base["ADMIN_TOKEN"];
    const child = spawn(`${ROOT}node_modules/.bin/node`, [`${ROOT}scripts/import.ts`, ...args], {
      cwd,
      env: { ...base, IMPORT_DEV_VARS: "", ...env },
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

/**
 * A temporary folder for one test file's inputs, removed after its tests: `write(name, content)`
 * returns the path, `dir()` the folder. Call at the top level of a test file (it registers the hooks).
 */
export function tempInputs(prefix: string): { write(name: string, content: string | Uint8Array): string; dir(): string } {
  let dir = "";
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    write(name, content) {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
    dir: () => dir,
  };
}
