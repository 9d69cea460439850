/**
 * Issue 52 review (break52), item 2 as a newcomer meets it: `npm start` itself (scripts/start.ts,
 * not wrangler with its arguments) on a port other than 8787, in a copy of the project's tracked
 * files (a fresh clone: no .dev.vars, no .wrangler/), started with the README's crawler flag; then
 * - the import command it prints, and the README's `npm run import -- FILE` with no `--url`, reach
 *   that server (the records are read back from it);
 * - the README's "Play a verified crawler locally" recipe, run as written (port changed), puts a
 *   verified Googlebot fetch of /sitemap.xml into the crawler log that status (the dashboard's
 *   source) shows.
 *
 * The copy shares the checkout's node_modules through a symlink; everything npm start writes
 * (.dev.vars, .wrangler/) stays in the copy, which is removed afterwards.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

let copy: string;
let port: number;
let origin: string;
let child: ChildProcess | null = null;
let output = "";

async function freePort(): Promise<number> {
  for (let p = 18660; p < 18700; p++) {
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once("error", () => resolve(false));
      probe.listen(p, "127.0.0.1", () => probe.close(() => resolve(true)));
    });
    if (free) return p;
  }
  throw new Error("no free port in 18660-18699");
}

/** A request to the local server: status and body. */
function call(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host: `localhost:${port}`, ...headers } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The ADMIN_TOKEN npm start wrote into the copy's .dev.vars. */
const adminToken = () => /^ADMIN_TOKEN=(\S+)$/m.exec(readFileSync(join(copy, ".dev.vars"), "utf8"))?.[1] ?? "";

/** Runs a command line in bash in the copy, as a newcomer pastes it: its exit and everything it printed (stdout, then stderr). */
function shell(line: string): { code: number; out: string } {
  const run = spawnSync("bash", ["-c", line], { cwd: copy, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
  return { code: run.status ?? -1, out: `${run.stdout}${run.stderr}` };
}

/** `npm start -- --port PORT …` in the copy (scripts/start.ts on the Node the suite runs on), once it printed where to look. */
async function startNpm(args: string[]): Promise<void> {
  output = "";
  const proc = spawn(process.execPath, ["scripts/start.ts", "--port", String(port), ...args], {
    cwd: copy,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", PATH: `${join(copy, "node_modules/.bin")}:${process.env["PATH"]}` },
  });
  child = proc;
  proc.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  proc.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 240_000;
  while (!output.includes(`edge-sitemaps is running on ${origin}`)) {
    if (proc.exitCode !== null) throw new Error(`npm start exited (${proc.exitCode}):\n${output}`);
    if (Date.now() > deadline) throw new Error(`npm start was not ready within 240 s:\n${output}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Stops the npm start this file started (its process group: wrangler and workerd with it). */
async function stopNpm(): Promise<void> {
  const proc = child;
  child = null;
  if (proc?.pid && proc.exitCode === null && proc.signalCode === null) {
    const exited = new Promise((resolve) => proc.once("exit", resolve));
    process.kill(-proc.pid, "SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (proc.exitCode === null && proc.signalCode === null) process.kill(-proc.pid, "SIGKILL");
  }
}

beforeAll(async () => {
  copy = mkdtempSync(join(tmpdir(), "edge-sitemaps-break52-clone-"));
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    try {
      copyFileSync(join(ROOT, file), join(copy, file));
    } catch {
      // A file deleted in the working tree but still tracked: a clone would have it, this copy need not.
    }
  }
  symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"), "dir");
  port = await freePort();
  origin = `http://localhost:${port}`;
  await startNpm(["--crawler-ranges-local"]);
}, 300_000);

afterAll(async () => {
  await stopNpm();
  if (copy) rmSync(copy, { recursive: true, force: true });
}, 30_000);

/** A small sitemap of `count` URLs under /break52-<tag>/ on the local site, gzipped, in the copy. */
function sitemapFile(tag: string, count: number): { file: string; locs: string[] } {
  const locs = Array.from({ length: count }, (_, i) => `${origin}/break52-${tag}/page-${i}`);
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${locs.map((l) => `<url><loc>${l}</loc></url>`).join("\n")}\n</urlset>\n`;
  const file = `imports/break52-${tag}.xml.gz`;
  mkdirSync(join(copy, "imports"), { recursive: true });
  writeFileSync(join(copy, file), gzipSync(xml));
  return { file, locs };
}

async function stored(loc: string): Promise<number> {
  return (await call(`/sitemap-admin/urls?loc=${encodeURIComponent(loc)}`, { authorization: `Bearer ${adminToken()}` })).status;
}

/** `npm run import -- FILE` as the README writes it: its exit, output and time, for the two tests below. */
let bare: { code: number; out: string; ms: number; locs: string[] } | null = null;

describe("npm start on another port than 8787, in a fresh copy", () => {
  it("prints an import command that names this server", () => {
    const line = output.split("\n").find((l) => /^\s*import:/.test(l));
    expect(line, output).toBeDefined();
    expect(line!.replace(/^\s*import:\s*/, "").trim()).toBe(`npm run import -- my-sitemap.xml.gz --url ${origin}`);
  });

  it("`npm run import -- FILE` with no --url reaches this server", async () => {
    const { file, locs } = sitemapFile("bare", 3);
    const started = Date.now();
    const run = shell(`npm run import -- ${file}`);
    bare = { ...run, ms: Date.now() - started, locs };
    expect(run.code, run.out).toBe(0);
    for (const loc of locs) expect(await stored(loc), loc).toBe(200);
  });

  it("that import of 3 new URLs (one shard to render, ~1 s) is done within 20 s, or says what it waits for", () => {
    expect(bare).not.toBeNull();
    const said = /wait/i.test(bare!.out);
    expect(said || bare!.ms < 20_000, `${(bare!.ms / 1000).toFixed(1)} s, printing:\n${bare!.out}`).toBe(true);
  });

  it("the README's crawler recipe, run as written (this port), shows a verified Googlebot fetch of /sitemap.xml in status", async () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const recipe = /## Play a verified crawler locally[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(recipe).toBeDefined();
    const [startLine, ...curls] = recipe!.trim().split("\n");
    expect(startLine).toMatch(/^npm start -- --crawler-ranges-local/);
    for (const line of curls) {
      const run = shell(line.replace(/\s+#.*$/, "").replaceAll("localhost:8787", `localhost:${port}`));
      expect(run.code, `${line}\n${run.out}`).toBe(0);
    }
    // A verified fetch of a document is written at once after the answer (waitUntil; the counts go
    // once a minute): give it 20 s, not a heartbeat.
    const token = adminToken();
    type Crawlers = { crawlers?: { name: string; requests: { verified24h: number }; index: unknown }[] };
    let crawlers: Crawlers | undefined;
    const verified = () => {
      const google = crawlers?.crawlers?.find((c) => c.name === "googlebot");
      return (google?.requests.verified24h ?? 0) >= 1 || (google?.index ?? null) !== null;
    };
    const until = Date.now() + 20_000;
    for (;;) {
      crawlers = (JSON.parse((await call("/sitemap-admin/status", { authorization: `Bearer ${token}` })).body) as { crawlers?: Crawlers }).crawlers;
      if (verified() || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    expect(verified(), JSON.stringify(crawlers)).toBe(true);
  });
});

describe("npm start after the README's Deploy step (the routes in wrangler.jsonc uncommented)", () => {
  it("still serves the local site it prints", { timeout: 300_000 }, async () => {
    await stopNpm();
    const config = join(copy, "wrangler.jsonc");
    const text = readFileSync(config, "utf8");
    const uncommented = text.replace(/\/\/ ("routes": \[)\n((?:\s*\/\/ .*\n)*?)\s*\/\/ (\],)/, (_all, open: string, body: string, close: string) => {
      return `${open}\n${body.replace(/\/\/ /g, "")}  ${close}`;
    });
    expect(uncommented).toMatch(/^\s*"routes": \[$/m);
    expect(uncommented).toMatch(/^\s*\{ "pattern": "example\.com\/sitemap\*", "zone_name": "example\.com" \},$/m);
    writeFileSync(config, uncommented);
    await startNpm([]);
    const index = await call("/sitemap.xml");
    expect(index.status, `${index.body}\n${output}`).toBe(200);
  });
});
