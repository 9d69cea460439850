import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ListedDatabase, checkDatabaseList, checkFirstRecord } from "./identity.ts";

const ORIGIN = "https://big.example";
const list = (...pairs: string[]): ListedDatabase[] =>
  pairs.map((pair) => {
    const [binding, id] = pair.split(":") as [string, string];
    return { binding, id };
  });
const RECORDED = list("DB:a", "DB_2:b", "DB_3:c");
const problem = (current: ListedDatabase[], recorded = RECORDED) => {
  const check = checkDatabaseList(ORIGIN, recorded, current);
  if (check.state !== "problem") throw new Error(`expected a problem, got ${check.state}`);
  return check;
};

describe("checkDatabaseList", () => {
  it("passes the recorded list, a binding renamed in its place, and an append", () => {
    expect(checkDatabaseList(ORIGIN, RECORDED, RECORDED)).toEqual({ state: "ok" });
    expect(checkDatabaseList(ORIGIN, RECORDED, list("DB:a", "BIG_2:b", "DB_3:c"))).toEqual({ state: "ok" });
    expect(checkDatabaseList(ORIGIN, RECORDED, list("DB:a", "DB_2:b", "DB_3:c", "DB_4:d"))).toEqual({
      state: "appended",
      appended: list("DB_4:d"),
    });
    // Nothing recorded yet: the whole list is new.
    expect(checkDatabaseList(ORIGIN, [], RECORDED)).toMatchObject({ state: "appended", appended: RECORDED });
  });

  it("names a reordered list, the database out of place, and the order to restore", () => {
    const swapped = problem(list("DB:a", "DB_3:c", "DB_2:b", "DB_4:d"));
    expect(swapped.kind).toBe("reordered");
    expect(swapped.problem).toBe(
      "SITE_DATABASES for https://big.example lists DB_3 second, but the database recorded second is DB_2's (b), listed third: the list was reordered; restore the order DB,DB_2,DB_3,DB_4 (append new databases at the end)",
    );
    // The databases swapped under the same binding names (their database_ids exchanged).
    expect(problem(list("DB:a", "DB_2:c", "DB_3:b")).problem).toContain(
      "lists DB_2 second, but the database recorded second is DB_2's (b), listed third as DB_3: the list was reordered; restore the order DB,DB_3,DB_2",
    );
    expect(problem(list("DB_2:b", "DB:a", "DB_3:c")).problem).toContain("lists DB_2 first, but the database recorded first is DB's (a)");
  });

  it("names a binding pointed at another database, a database put in another's place, and a dropped one", () => {
    const repointed = problem(list("DB:a", "DB_2:x", "DB_3:c"));
    expect(repointed.kind).toBe("repointed");
    expect(repointed.problem).toContain(
      "SITE_DATABASES for https://big.example lists DB_2, but DB_2 is now another database (x) than the one recorded as the site's second partition (b)",
    );
    const replaced = problem(list("DB:a", "NEW:x", "DB_3:c"));
    expect(replaced.kind).toBe("replaced");
    expect(replaced.problem).toContain("lists NEW second, a database not recorded for the site (x), in place of the one recorded second, DB_2's (b)");
    for (const current of [list("DB:a", "DB_2:b"), list("DB:a", "DB_3:c"), list("DB:a", "DB_3:c", "DB_4:d")]) {
      const dropped = problem(current);
      expect(dropped.kind).toBe("dropped");
      expect(dropped.problem).toMatch(
        /^SITE_DATABASES for https:\/\/big\.example no longer lists the database recorded as the site's (third|second) partition/,
      );
      expect(dropped.problem).toContain("Removing a database from a site is not supported");
    }
    expect(problem(list("DB:a", "DB_3:c")).problem).toContain("list it again in its place (DB,DB_2,DB_3)");
  });

  it("names one database listed twice", () => {
    const repeated = problem(list("DB:a", "DB_2:b", "DB_3:c", "DB_4:b"));
    expect(repeated.kind).toBe("repeated");
    expect(repeated.problem).toContain("lists DB_2 and DB_4, which are one database (b)");
  });

  it("counts places past the tenth", () => {
    const many = Array.from({ length: 23 }, (_, i) => ({ binding: `DB_${i}`, id: `id${i}` }));
    const moved = [...many.slice(0, 21), many[22]!, many[21]!];
    expect(problem(moved, many).problem).toContain("lists DB_22 22nd, but the database recorded 22nd is DB_21's (id21), listed 23rd");
  });
});

describe("checkFirstRecord: a site with nothing recorded lived in one database", () => {
  const ALL = list("DB:a", "DB_2:b", "DB_3:c", "DB_4:d");
  it("passes a list only when its first database holds the site, or none does, and no unlisted one does (generated, reference rule)", () => {
    const lists = fc
      .shuffledSubarray(ALL, { minLength: 1, maxLength: 4 })
      .chain((l) => fc.shuffledSubarray(l, { minLength: l.length, maxLength: l.length }));
    fc.assert(
      fc.property(lists, fc.subarray(ALL, { maxLength: 2 }), (current, holders) => {
        const check = checkFirstRecord(ORIGIN, current, holders);
        const firstHolds = holders.some((h) => h.id === current[0]!.id);
        const home = firstHolds ? holders.find((h) => !current.some((c) => c.id === h.id)) : holders[0];
        const accepted = (holders.length === 0 || firstHolds) && holders.every((h) => current.some((c) => c.id === h.id));
        if (accepted) expect(check).toEqual({ state: "ok" });
        else {
          if (check.state !== "problem") throw new Error("expected a problem");
          const listed = current.some((c) => c.id === home!.id);
          expect(check.kind).toBe(listed ? "reordered" : "dropped");
          expect(check.problem).toContain(`SITE_DATABASES for ${ORIGIN} lists ${current[0]!.binding} first`);
          expect(check.problem).toContain(`${home!.binding}'s (${home!.id})`);
        }
      }),
      { seed: 4905, numRuns: 200 },
    );
  });
});
