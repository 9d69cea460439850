/**
 * What `npm start [-- args]` does with its arguments, which it passes through to `wrangler dev`:
 * the seeding must reach the store the Worker will read, so the arguments that decide the
 * Worker's vars and storage are read here the way wrangler reads them (yargs):
 *
 * - `--var K:V [K:V …]`, `--var=K:V`, repeated: an array option (it takes the following words up
 *   to the next `-…`); each value splits at its first `:`; a later value of a name wins;
 * - `--persist-to DIR` / `--persist-to=DIR`: where local D1/KV/Cache live;
 * - `--env-file FILE [FILE …]`: read instead of `.dev.vars`;
 * - `--port N` / `--port=N`: taken out here (npm start sets the port and SITES from it);
 * - `--verbose`: taken out here: npm start then shows wrangler's own output (migration tables,
 *   warnings of the seeding step, `wrangler dev`'s start-up and interactive keys) as it comes;
 * - `--demo-sites N` / `--demo-sites=N`: taken out here: N registered demo sites,
 *   http://t1.test:PORT … (scripts/local-db.ts `registerDemoSites`).
 *
 * `-c/--config` and `-e/--env` are refused: the seeding reads wrangler.jsonc's top level, and a
 * Worker of another configuration or environment would read other stores (and other vars).
 */
import type { LocalState } from "./local-db.ts";

export class StartArgsError extends Error {
  override readonly name = "StartArgsError";
}

export interface StartPlan {
  port: number;
  /** The site served: http://localhost:PORT. */
  origin: string;
  state: LocalState;
  /**
   * The vars `wrangler dev` gets on its command line, in its order of precedence: SITES, then
   * URL_SOURCE and MANIFEST_STORE from the environment, then the passed-through `--var`s.
   */
  vars: Record<string, string>;
  /** Arguments of `wrangler …` (starting with `dev`). */
  wranglerArgs: string[];
  /** `--verbose`: show wrangler's own output, not only npm start's one line per step. */
  verbose: boolean;
  /** `--demo-sites N`: registered demo sites to seed (0: none). */
  demoSites: number;
  /** `--crawler-ranges-local`: serve loopback IP ranges for googlebot and bingbot (scripts/local-crawler-ranges.ts). */
  crawlerRangesLocal: boolean;
}

/** Registered demo sites at most (each is a registry row and 50 records). */
const MAX_DEMO_SITES = 10_000;

/** Variables read from the environment (`URL_SOURCE=kv npm start`). */
const ENVIRONMENT_VARS = ["URL_SOURCE", "MANIFEST_STORE"] as const;

const isFlag = (word: string): boolean => word.startsWith("-") && !/^-\d/.test(word);

/** `--name`, `--name=value`: the option's name (camelCase folded to kebab-case, as yargs accepts both) and inline value. */
function option(word: string): { name: string; inline: string | undefined } | null {
  const match = /^--?([A-Za-z][\w-]*)(?:=([\s\S]*))?$/.exec(word);
  if (!match) return null;
  return { name: match[1]!.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), inline: match[2] };
}

export function startPlan(args: readonly string[], environment: Readonly<Record<string, string | undefined>>): StartPlan {
  let port = 8787;
  const cliVars: Record<string, string> = {};
  const envFiles: string[] = [];
  let persistTo: string | undefined;
  let verbose = false;
  let demoSites = 0;
  let crawlerRangesLocal = false;
  const rest: string[] = [];

  /** The values of an array option: the inline one, then the words up to the next flag. */
  const arrayValues = (at: number, inline: string | undefined): { values: string[]; next: number } => {
    const values = inline === undefined ? [] : [inline];
    let i = at + 1;
    while (i < args.length && !isFlag(args[i]!)) values.push(args[i++]!);
    return { values, next: i };
  };
  /** The value of a single-valued option: inline, or the next word. */
  const single = (at: number, inline: string | undefined, name: string): { value: string; next: number } => {
    if (inline !== undefined) return { value: inline, next: at + 1 };
    const value = args[at + 1];
    if (value === undefined || isFlag(value)) throw new StartArgsError(`--${name} needs a value`);
    return { value, next: at + 2 };
  };

  for (let i = 0; i < args.length; ) {
    const word = args[i]!;
    if (word === "--") {
      rest.push(...args.slice(i));
      break;
    }
    const opt = option(word);
    switch (opt?.name) {
      case "port": {
        const { value, next } = single(i, opt.inline, "port");
        port = Number(value);
        if (!/^\d+$/.test(value) || !Number.isInteger(port) || port <= 0 || port > 65535) {
          throw new StartArgsError(`--port must be a TCP port (1-65535), got ${JSON.stringify(value)}`);
        }
        i = next;
        continue;
      }
      case "var": {
        const { values, next } = arrayValues(i, opt.inline);
        if (values.length === 0) throw new StartArgsError("--var needs NAME:VALUE");
        for (const value of values) {
          const [name = "", ...parts] = value.split(":");
          cliVars[name] = parts.join(":");
        }
        rest.push(...args.slice(i, next));
        i = next;
        continue;
      }
      case "env-file": {
        const { values, next } = arrayValues(i, opt.inline);
        envFiles.push(...values);
        rest.push(...args.slice(i, next));
        i = next;
        continue;
      }
      case "persist-to": {
        const { value, next } = single(i, opt.inline, "persist-to");
        persistTo = value;
        rest.push(...args.slice(i, next));
        i = next;
        continue;
      }
      case "demo-sites": {
        const { value, next } = single(i, opt.inline, "demo-sites");
        demoSites = Number(value);
        if (!/^\d+$/.test(value) || demoSites < 1 || demoSites > MAX_DEMO_SITES) {
          throw new StartArgsError(`--demo-sites must be a number of sites (1-${MAX_DEMO_SITES}), got ${JSON.stringify(value)}`);
        }
        i = next;
        continue;
      }
      case "crawler-ranges-local":
        if (opt.inline !== undefined) throw new StartArgsError("--crawler-ranges-local takes no value");
        crawlerRangesLocal = true;
        i += 1;
        continue;
      case "verbose":
        if (opt.inline !== undefined) throw new StartArgsError("--verbose takes no value");
        verbose = true;
        i += 1;
        continue;
      case "c":
      case "config":
      case "e":
      case "env":
        throw new StartArgsError(
          `npm start does not take ${word.split("=")[0]}: it seeds the local stores of wrangler.jsonc's top level; use \`npm run dev -- ${word.split("=")[0]} …\` (no seeding)`,
        );
      default:
        rest.push(word);
        i += 1;
    }
  }

  const origin = `http://localhost:${port}`;
  const fromEnvironment: Record<string, string> = {};
  for (const name of ENVIRONMENT_VARS) {
    const value = environment[name];
    if (value) fromEnvironment[name] = value;
  }
  const vars = { SITES: origin, ...fromEnvironment, ...cliVars };
  const wranglerArgs = [
    "dev",
    "--test-scheduled",
    // Once wrangler.jsonc has routes (the README's deploy step), wrangler dev would hand the Worker
    // the first route's host instead of localhost: every local URL "unknown site".
    "--infer-origin-from-routes=false",
    "--port",
    String(port),
    "--ip",
    "127.0.0.1",
    ...Object.entries({ SITES: origin, ...fromEnvironment }).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
    ...rest,
  ];
  return {
    port,
    origin,
    state: { ...(persistTo ? { persistTo } : {}), ...(envFiles.length > 0 ? { envFiles } : {}) },
    vars,
    wranglerArgs,
    verbose,
    demoSites,
    crawlerRangesLocal,
  };
}
