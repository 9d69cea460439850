/**
 * Where the server `npm start` started listens, for `npm run import` (and anything local) to find
 * it whatever its port: `npm start` records its origin in a git-ignored file under .wrangler/ (the
 * local state wrangler keeps there), the import reads it when no `--url` is given.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The record, relative to the project's root. */
export const LOCAL_SERVER_FILE = ".wrangler/local-server.json";
/** The origin `npm start` serves when no port is given (wrangler dev's default). */
export const DEFAULT_LOCAL_ORIGIN = "http://localhost:8787";

export function recordLocalServer(root: string, origin: string): void {
  const path = join(root, LOCAL_SERVER_FILE);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify({ origin })}\n`);
}

/** The origin last recorded under `root`, or undefined (none, or not one we wrote). */
export function recordedLocalServer(root: string): string | undefined {
  const path = join(root, LOCAL_SERVER_FILE);
  if (!existsSync(path)) return undefined;
  try {
    const { origin } = JSON.parse(readFileSync(path, "utf8")) as { origin?: unknown };
    return typeof origin === "string" && /^http:\/\/[^/]+$/.test(origin) ? origin : undefined;
  } catch {
    return undefined;
  }
}

/** The record removed when it still names `origin` (the server stopped): an import then says no server runs, rather than aim at a dead port. */
export function forgetLocalServer(root: string, origin: string): void {
  if (recordedLocalServer(root) === origin) rmSync(join(root, LOCAL_SERVER_FILE), { force: true });
}
