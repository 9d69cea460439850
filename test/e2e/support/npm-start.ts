/**
 * `npm start` itself (scripts/start.ts: migrations, the demo seed, `wrangler dev`), as a newcomer
 * runs it, in a copy of the project's tracked files (a fresh clone: no .dev.vars, no .wrangler/).
 * The copy shares the checkout's node_modules through a symlink; everything npm start writes
 * (.dev.vars with its random ADMIN_TOKEN, .wrangler/ with the local stores) stays in the copy,
 * which `stop()` removes with the process group it started.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export interface NpmStart {
  port: number;
  origin: string;
  /** The copy npm start runs in. */
  dir: string;
  /** Everything npm start printed so far (after "ready": wrangler's request log and the Worker's console lines). */
  output(): string;
  /** The ADMIN_TOKEN npm start wrote into the copy's .dev.vars. */
  adminToken(): string;
  /** Stops npm start (its process group: wrangler and workerd with it) and removes the copy. */
  stop(): Promise<void>;
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

/** A free port in [from, from + 40): outside wrangler's 8787 and the ephemeral range. */
async function freePort(from: number): Promise<number> {
  for (let p = from; p < from + 40; p++) if (await portIsFree(p)) return p;
  throw new Error(`no free port in ${from}-${from + 39}`);
}

/** A copy of the tracked files, node_modules linked. */
function cloneLike(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    try {
      copyFileSync(join(ROOT, file), join(dir, file));
    } catch {
      // A file deleted in the working tree but still tracked: a clone would have it, this copy need not.
    }
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

/**
 * `npm start -- --port PORT …args` in a fresh copy (scripts/start.ts on the Node the suite runs
 * on), resolved once it printed where to look. `portFrom`: where to look for a free port.
 */
export async function startNpm(args: readonly string[], { portFrom, prefix }: { portFrom: number; prefix: string }): Promise<NpmStart> {
  const dir = cloneLike(prefix);
  const port = await freePort(portFrom);
  const origin = `http://localhost:${port}`;
  let output = "";
  const proc: ChildProcess = spawn(process.execPath, ["scripts/start.ts", "--port", String(port), ...args], {
    cwd: dir,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", PATH: `${join(dir, "node_modules/.bin")}:${process.env["PATH"]}` },
  });
  // Killed with the test process too (an interrupted run leaves no workerd behind).
  const kill = (): void => {
    try {
      if (proc.pid && proc.exitCode === null) process.kill(-proc.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  process.once("exit", kill);
  proc.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  proc.stderr?.on("data", (d: Buffer) => (output += d.toString()));

  const stop = async (): Promise<void> => {
    if (proc.pid && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      process.kill(-proc.pid, "SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      kill();
    }
    process.removeListener("exit", kill);
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 240_000;
  while (!output.includes(`edge-sitemaps is running on ${origin}`)) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(proc.exitCode !== null ? `npm start exited (${proc.exitCode}):\n${output}` : `npm start was not ready within 240 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    port,
    origin,
    dir,
    output: () => output,
    adminToken: () => /^ADMIN_TOKEN=(\S+)$/m.exec(readFileSync(join(dir, ".dev.vars"), "utf8"))?.[1] ?? "",
    stop,
  };
}
