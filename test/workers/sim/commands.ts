/**
 * The simulation's commands (issue 49, item 8) and their generators: one declaration per kind, from
 * which the program generator, the CLI's `--without` and the printed program derive.
 */
import fc from "fast-check";
import { MIRROR_LOCS } from "./mirror.ts";

/** How a picked queue message is delivered. */
const DELIVERIES = ["once", "duplicated", "delayed", "killed"] as const;

export type Command =
  | { kind: "put"; locs: number[]; day: number; skewSeconds: number }
  | { kind: "delete"; locs: number[]; skewSeconds: number }
  | { kind: "sync-open" }
  | { kind: "sync-batch"; sync: number; locs: number[]; day: number }
  | { kind: "sync-commit"; sync: number; maxDelete: number }
  | { kind: "sync-abort"; sync: number }
  | { kind: "heartbeat" }
  | { kind: "deliver"; pick: number; how: (typeof DELIVERIES)[number] }
  | { kind: "send-fails" }
  | { kind: "grow" }
  | { kind: "advance"; seconds: number }
  | { kind: "purge" }
  | { kind: "mirror-remote"; locs: number[]; day: number };

/**
 * A command kind, or "skewed-write": a PUT or DELETE from a writer whose clock disagrees with commit
 * order by a few seconds; or "lagging-write": one whose clock is 90 s behind, past the regeneration's
 * settle window (REGEN_SETTLE_SECONDS, 60 s); or "write-in-sync": four commands in a row — a sync
 * opened, a batch sent to it, a skewed write by another writer, the sync committed — the order in
 * which a commit judging "written since the sync opened" by stamp deletes an acknowledged PUT, which
 * separate commands put together too rarely for the fixed seeds (break49-sim-programs.test.ts).
 */
export type Kind = Command["kind"] | "skewed-write" | "lagging-write" | "write-in-sync";

/** A sync index that names the newest open sync (the runner counts negative indexes from the end). */
const NEWEST_SYNC = -1;

/**
 * Kinds the fixed CI seeds leave out, each an open defect named in docs/capacity.md "The simulation"
 * (none today: `mirror-remote` was one until a partitioned sync's guard probe stopped moving parts on,
 * test/workers/partitions-sync-resume.test.ts).
 */
export const OPEN_DEFECTS: readonly Kind[] = [];

/** The pool of locs a program writes (indexes into it). */
export const LOCS = 48;
const locs = fc.uniqueArray(fc.nat(LOCS - 1), { minLength: 1, maxLength: 6 });
const day = fc.integer({ min: 1, max: 28 });
/** A writer whose clock is behind (or ahead of) the one that committed before it (seconds). */
const skew = fc.constantFrom(-5, 5);

/** Every kind with its generator (one command, or several in a row) and its weight in a program. */
const COMMANDS: Record<Kind, { weight: number; arbitrary: fc.Arbitrary<Command | Command[]> }> = {
  put: { weight: 5, arbitrary: fc.record({ kind: fc.constant("put"), locs, day, skewSeconds: fc.constant(0) }) },
  delete: { weight: 3, arbitrary: fc.record({ kind: fc.constant("delete"), locs, skewSeconds: fc.constant(0) }) },
  "skewed-write": {
    weight: 2,
    arbitrary: fc.oneof(
      fc.record({ kind: fc.constant("put"), locs, day, skewSeconds: skew }),
      fc.record({ kind: fc.constant("delete"), locs, skewSeconds: skew }),
    ),
  },
  "lagging-write": {
    weight: 1,
    arbitrary: fc.oneof(
      fc.record({ kind: fc.constant("put"), locs, day, skewSeconds: fc.constant(-90) }),
      fc.record({ kind: fc.constant("delete"), locs, skewSeconds: fc.constant(-90) }),
    ),
  },
  "write-in-sync": {
    weight: 1,
    arbitrary: fc
      .tuple(
        locs,
        day,
        fc.oneof(
          fc.record({ kind: fc.constant("put"), locs, day, skewSeconds: skew }),
          fc.record({ kind: fc.constant("delete"), locs, skewSeconds: skew }),
        ),
        fc.constantFrom(0.5, 1),
      )
      .map(([seen, seenDay, write, maxDelete]): Command[] => [
        { kind: "sync-open" },
        { kind: "sync-batch", sync: NEWEST_SYNC, locs: seen, day: seenDay },
        write as Command,
        { kind: "sync-commit", sync: NEWEST_SYNC, maxDelete },
      ]),
  },
  "sync-open": { weight: 2, arbitrary: fc.constant({ kind: "sync-open" }) },
  "sync-batch": {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("sync-batch"),
      sync: fc.nat(3),
      locs: fc.uniqueArray(fc.nat(LOCS - 1), { minLength: 1, maxLength: 24 }),
      day,
    }),
  },
  "sync-commit": { weight: 2, arbitrary: fc.record({ kind: fc.constant("sync-commit"), sync: fc.nat(3), maxDelete: fc.constantFrom(0, 0.1, 0.5, 1) }) },
  "sync-abort": { weight: 1, arbitrary: fc.record({ kind: fc.constant("sync-abort"), sync: fc.nat(3) }) },
  heartbeat: { weight: 2, arbitrary: fc.constant({ kind: "heartbeat" }) },
  deliver: { weight: 8, arbitrary: fc.record({ kind: fc.constant("deliver"), pick: fc.nat(7), how: fc.constantFrom(...DELIVERIES) }) },
  "send-fails": { weight: 1, arbitrary: fc.constant({ kind: "send-fails" }) },
  grow: { weight: 1, arbitrary: fc.constant({ kind: "grow" }) },
  advance: { weight: 1, arbitrary: fc.record({ kind: fc.constant("advance"), seconds: fc.constantFrom(10, 70, 600) }) },
  purge: { weight: 1, arbitrary: fc.constant({ kind: "purge" }) },
  "mirror-remote": {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("mirror-remote"), locs: fc.uniqueArray(fc.nat(MIRROR_LOCS - 1), { minLength: 1, maxLength: 8 }), day }),
  },
} as Record<Kind, { weight: number; arbitrary: fc.Arbitrary<Command | Command[]> }>;

export const KINDS = Object.keys(COMMANDS) as Kind[];

export interface Program {
  /** How many databases the site starts over (it grows by one with a `grow` command). */
  databases: number;
  commands: Command[];
}

/** Programs of up to `maxLength` commands of every kind not in `without`. */
export function programs(maxLength: number, without: readonly Kind[] = []): fc.Arbitrary<Program> {
  const kinds = KINDS.filter((k) => !without.includes(k));
  const command = fc.oneof(...kinds.map((k) => ({ weight: COMMANDS[k].weight, arbitrary: COMMANDS[k].arbitrary })));
  // A kind of several commands in a row counts as one of the `maxLength`.
  const commands = fc.array(command, { minLength: 1, maxLength }).map((items) => items.flat());
  return fc.record({ databases: fc.integer({ min: 1, max: 3 }), commands });
}

/** One line a command, for a shrunk program printed readably. */
export function printProgram(program: Program): string {
  const lines = program.commands.map((c, i) => {
    const { kind, ...args } = c;
    const shown = Object.entries(args).map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.join(",")}]` : String(v)}`);
    return `  ${String(i).padStart(3)}  ${kind} ${shown.join(" ")}`;
  });
  return [`site over ${program.databases} database(s):`, ...lines].join("\n");
}
