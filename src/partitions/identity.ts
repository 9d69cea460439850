/**
 * Which database each partition of a site is. A partition is its position in the site's
 * SITE_DATABASES list: a loc's home is computed from positions (home.ts), and the layout in the
 * first database keeps only counts (layout.ts). So the list may only grow at its end. A list that
 * swaps two databases sends a write of an existing loc to the other one (a second row of it), and
 * a list without one stops serving that database's share.
 *
 * A D1 binding tells the Worker nothing about which database it is. So each database carries an
 * identity of its own (a random id made at its first use), and the site's databases record the
 * identities of its partitions in order: database-list.ts compares them with the listed ones at
 * run time. scripts/partitions-lock.ts compares wrangler.jsonc's database_ids with the lists
 * deployed before, before a deploy. Both use `checkDatabaseList`, which is pure.
 */

/** A database in a site's list: the binding that names it, and which database it is. */
export interface ListedDatabase {
  binding: string;
  id: string;
}

/** What a problem is, for tests and tools; `problem` says it to a person. */
type ProblemKind = "reordered" | "repointed" | "replaced" | "dropped" | "repeated";

export type DatabaseListCheck =
  | { state: "ok" }
  /** The recorded databases in their places, and more after them: a database added to the site, filled by a move. */
  | { state: "appended"; appended: readonly ListedDatabase[] }
  | { state: "problem"; kind: ProblemKind; problem: string };

/**
 * One database as the run-time check sees it (src/adapters/d1/database-identity.ts). Every database
 * of a site holds the whole record of its partitions. If only the first held it, a list whose
 * first binding was swapped would find no record there and take the wrong order for a new site's.
 */
export interface DatabaseIdentityStore {
  /**
   * This database's identity (made at its first use), its record of `origin`'s partitions in order
   * (empty: none), and whether it holds any of the site's rows or a layout of it (`holds`).
   */
  read(origin: string, now: number): Promise<{ id: string; recorded: ListedDatabase[]; holds: boolean }>;
  /** Records `list` as `origin`'s partitions from the first on; a position already recorded keeps what it holds. */
  record(origin: string, list: readonly ListedDatabase[], now: number): Promise<void>;
}

const ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"];

/** "second" for position 1; "23rd" for position 22. */
function ordinal(position: number): string {
  const n = position + 1;
  const word = ORDINALS[position];
  if (word) return word;
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${suffix}`;
}

const named = (d: ListedDatabase): string => `${d.binding}'s (${d.id})`;

/**
 * Whether `current` (the list as configured now, each binding with its database's identity) keeps
 * every database of `recorded` (as recorded for the site's partitions) in its place. Extra
 * databases at the end are an append. The first difference found is the problem, in this order:
 * a database listed twice, a recorded one missing (repointed, replaced or dropped), one moved.
 */
export function checkDatabaseList(origin: string, recorded: readonly ListedDatabase[], current: readonly ListedDatabase[]): DatabaseListCheck {
  const list = `SITE_DATABASES for ${origin}`;
  const problem = (kind: ProblemKind, text: string): DatabaseListCheck => ({ state: "problem", kind, problem: `${list} ${text}` });
  const at = (id: string): number => current.findIndex((c) => c.id === id);
  // The list to go back to: each recorded database under the binding that names it now, then the others.
  const restored = (): string => {
    const first = recorded.map((r) => current[at(r.id)]?.binding ?? r.binding);
    return [...first, ...current.map((c) => c.binding).filter((b) => !first.includes(b))].join(",");
  };

  for (const [j, c] of current.entries()) {
    const i = at(c.id);
    if (i < j) {
      return problem(
        "repeated",
        `lists ${current[i]!.binding} and ${c.binding}, which are one database (${c.id}): each partition needs a database of its own; list each database once`,
      );
    }
  }
  for (const [i, r] of recorded.entries()) {
    if (at(r.id) >= 0) continue;
    const sameName = current.find((c) => c.binding === r.binding);
    if (sameName) {
      return problem(
        "repointed",
        `lists ${r.binding}, but ${r.binding} is now another database (${sameName.id}) than the one recorded as the site's ${ordinal(i)} partition (${r.id}), which holds that partition's records: point ${r.binding} back at ${r.id} (a database is added by appending a new binding to the list)`,
      );
    }
    const inPlace = current[i];
    if (inPlace && !recorded.some((x) => x.id === inPlace.id)) {
      return problem(
        "replaced",
        `lists ${inPlace.binding} ${ordinal(i)}, a database not recorded for the site (${inPlace.id}), in place of the one recorded ${ordinal(i)}, ${named(r)}, which holds that partition's records: list ${r.binding} ${ordinal(i)} again (${restored()}); a database is added by appending it at the end`,
      );
    }
    return problem(
      "dropped",
      `no longer lists the database recorded as the site's ${ordinal(i)} partition, ${named(r)}: its records would no longer be served, and their locs would be written again elsewhere; list it again in its place (${restored()}). Removing a database from a site is not supported`,
    );
  }
  for (const [i, r] of recorded.entries()) {
    const c = current[i];
    // Every recorded database is listed, each once: only a record naming one database twice leaves this short.
    if (c === undefined) return problem("dropped", `lists fewer databases than are recorded for the site's partitions; restore ${restored()}`);
    if (c.id === r.id) continue;
    const j = at(r.id);
    const as = current[j]!.binding === r.binding ? "" : ` as ${current[j]!.binding}`;
    return problem(
      "reordered",
      `lists ${c.binding} ${ordinal(i)}, but the database recorded ${ordinal(i)} is ${named(r)}, listed ${ordinal(j)}${as}: the list was reordered; restore the order ${restored()} (append new databases at the end)`,
    );
  }
  return current.length > recorded.length ? { state: "appended", appended: current.slice(recorded.length) } : { state: "ok" };
}

/**
 * Whether a list with nothing recorded may be recorded as it is: a site's first record is made at its
 * first use, and until then it lived in one database (its SITE_DATABASES binding, or DB when
 * unlisted), which must be the list's first: a site relisted with that database second, or not at
 * all, would serve none of its records and write each loc a second time.
 * `holders`: the databases that hold the site's rows or layout, listed or not (every bound one).
 * The list's first must hold it when a listed one does: the first listed holding it is a site grown
 * from it (or seeded into its partitions by npm start, or partitioned before identities were
 * recorded). And no database left out of the list may hold it, even when the first does too (rows a
 * refused start seeded into the new first while the home still holds the site).
 */
export function checkFirstRecord(origin: string, current: readonly ListedDatabase[], holders: readonly ListedDatabase[]): DatabaseListCheck {
  const first = current[0];
  if (first === undefined) return { state: "ok" };
  const home = holders.some((h) => h.id === first.id) ? holders.find((h) => !current.some((c) => c.id === h.id)) : holders[0];
  if (home === undefined) return { state: "ok" };
  const listed = current.some((c) => c.id === home.id);
  const restored = [home.binding, ...current.map((c) => c.binding).filter((b) => b !== home.binding)].join(",");
  return {
    state: "problem",
    kind: listed ? "reordered" : "dropped",
    problem: `SITE_DATABASES for ${origin} lists ${first.binding} first, but the site's records are in ${named(home)}${listed ? ", listed later" : ", not listed"}: a site's first database stays first; list it first again (${restored}) and append new databases at the end`,
  };
}
