/**
 * Walking the input: the entries of a file or URL, and of every sitemap an index lists (relative
 * to it, at most MAX_SHARD_DEPTH indexes deep, each sitemap once). An unreadable or broken shard
 * is reported on the index line that lists it; the other shards are still read.
 */
import { InputError, type OpenLimits, type Opened, openInput } from "./input.ts";
import type { Problems } from "./problems.ts";
import type { Progress } from "./progress.ts";
import { type Format, detectFormat, readItems } from "./readers.ts";
import { resolveShard } from "./shards.ts";

const MAX_SHARD_DEPTH = 3;
/** An index lists at most 50,000 sitemaps (the protocol's limit); more are reported, not kept in memory. */
const MAX_SHARDS_PER_INDEX = 50_000;

/** One entry of the input: a record input with the file and line it comes from. */
export interface Entry {
  source: string;
  line: number;
  input: Record<string, unknown>;
}

interface Level {
  opened: Opened;
  shardsDone: number;
  shardsTotal: number | undefined;
}

export class InputWalker {
  readonly #problems: Problems;
  readonly #progress: Progress;
  readonly #noFetch: boolean;
  readonly #allowHosts: ReadonlySet<string>;
  readonly #maxDecompressed: number;
  /** The files open right now: the input, the shard being read, … */
  readonly #levels: Level[] = [];
  readonly #visited = new Set<string>();

  constructor(problems: Problems, progress: Progress, options: { noFetch: boolean; allowHosts: readonly string[]; maxDecompressed: number }) {
    this.#problems = problems;
    this.#progress = progress;
    this.#noFetch = options.noFetch;
    this.#allowHosts = new Set(options.allowHosts);
    this.#maxDecompressed = options.maxDecompressed;
  }

  /** A new pass reads every sitemap again. */
  restart(): void {
    this.#visited.clear();
  }

  /** How much of the input has been read (0…1), when the sizes tell. */
  fraction(): number | undefined {
    return fractionOf(this.#levels);
  }

  async *walk(spec: string, format: Format | undefined, depth = 0, hosts?: ReadonlySet<string>): AsyncGenerator<Entry> {
    this.#visited.add(spec);
    const limits: OpenLimits = { maxDecompressed: this.#maxDecompressed };
    if (hosts !== undefined) limits.hosts = hosts;
    const opened = await openInput(spec, limits);
    const level: Level = { opened, shardsDone: 0, shardsTotal: undefined };
    this.#levels.push(level);
    if (depth === 0 && opened.size !== undefined) this.#progress.sized();
    try {
      const fmt = format ?? detectFormat(spec, opened.head);
      const shards: { loc: string; line: number }[] = [];
      let skipping = false;
      const dropped = (kind: string, line: number, why?: string): void => this.#problems.dropped(kind, `${spec}:${line}`, why);
      for await (const item of readItems(opened, fmt, dropped)) {
        if (item.error !== undefined) this.#problems.report(`${spec}:${item.line}`, item.error);
        else if (item.sitemap === undefined) yield { source: spec, line: item.line, input: item.input! };
        else if (shards.length < MAX_SHARDS_PER_INDEX) shards.push({ loc: item.sitemap, line: item.line });
        else if (!skipping) {
          skipping = true;
          this.#problems.report(`${spec}:${item.line}`, `more than ${MAX_SHARDS_PER_INDEX} sitemaps in one index: the rest are skipped`);
        }
      }
      if (shards.length === 0) return;
      level.shardsTotal = shards.length;
      for (const shard of shards) {
        yield* this.#shard(spec, opened, shard, depth);
        level.shardsDone += 1;
      }
    } finally {
      this.#levels.pop();
    }
  }

  async *#shard(spec: string, index: Opened, shard: { loc: string; line: number }, depth: number): AsyncGenerator<Entry> {
    const where = `${spec}:${shard.line}`;
    let target: string;
    let hosts: ReadonlySet<string> | undefined;
    try {
      ({ target, hosts } = resolveShard(shard.loc, index, this.#noFetch, this.#allowHosts));
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      this.#problems.report(where, err.message);
      return;
    }
    if (this.#visited.has(target)) this.#problems.report(where, `sitemap ${shard.loc} was already read (a loop or a repeat): skipped`);
    else if (depth >= MAX_SHARD_DEPTH) this.#problems.report(where, `sitemap indexes nested more than ${MAX_SHARD_DEPTH} deep: ${shard.loc} skipped`);
    else {
      try {
        yield* this.walk(target, undefined, depth + 1, hosts);
      } catch (err) {
        // In the default mode nothing is sent anyway; with --skip-invalid the other shards still count.
        if (!(err instanceof InputError)) throw err;
        this.#problems.report(where, err.message);
      }
    }
  }
}

function fractionOf(levels: readonly Level[], i = 0): number | undefined {
  const level = levels[i];
  if (level === undefined) return undefined;
  if (level.shardsTotal !== undefined) {
    if (level.shardsTotal === 0) return 1;
    return (level.shardsDone + (fractionOf(levels, i + 1) ?? 0)) / level.shardsTotal;
  }
  return level.opened.size ? level.opened.consumed() / level.opened.size : undefined;
}
