/**
 * docs/configuration.md's tables (moved out of the README, issue 52) list exactly the declared variables and secrets, with their
 * defaults, and any range they give a whole number is its rule's. docs/configuration.md is the one description
 * of what each variable does; the declarations (src/config/variables/) hold the rules.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Variable } from "../../src/config/variable.ts";
import { VARIABLES } from "../../src/config/variables/index.ts";

const README = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");

interface Row {
  fallback: string;
  meaning: string;
}

/** name → default and meaning cells of the table whose header row starts with `| ${first} | default |`. */
function table(first: "variable" | "secret"): Map<string, Row> {
  const lines = README.split("\n");
  const header = lines.findIndex((line) => line.startsWith(`| ${first} | default |`));
  expect(header, `README has a "| ${first} | default |" table`).toBeGreaterThanOrEqual(0);
  const rows = new Map<string, Row>();
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break;
    const [name = "", fallback = "", meaning = ""] = line
      .split("|")
      .slice(1)
      .map((cell) => cell.trim());
    const bare = /^`([A-Z0-9_]+)`$/.exec(name);
    expect(bare, `one variable per row: ${line}`).not.toBeNull();
    expect(rows.has(bare![1]!), `${bare![1]} listed twice`).toBe(false);
    rows.set(bare![1]!, { fallback, meaning });
  }
  return rows;
}

/** How the README writes a declared default. */
function shownDefault(variable: Variable): string {
  if (variable.default === null) return variable.presence === "required" ? "— (required)" : (variable.unset ?? "—");
  return variable.default === "" ? "empty" : `\`${variable.default}\``;
}

describe("README configuration tables", () => {
  for (const kind of ["variable", "secret"] as const) {
    it(`list every declared ${kind}, none extra, with the declared default`, () => {
      const declared = VARIABLES.filter((v) => v.secret === (kind === "secret"));
      const readme = table(kind);
      expect([...readme.keys()].sort()).toEqual(declared.map((v) => v.name).sort());
      for (const variable of declared) expect(readme.get(variable.name)?.fallback, variable.name).toBe(shownDefault(variable));
    });
  }

  it("gives a whole number's range, where it gives one, as its rule has it", () => {
    const readme = table("variable");
    let checked = 0;
    for (const variable of VARIABLES) {
      const rule = /^must be a whole number from (\d+) to (\d+)$/.exec(variable.rule);
      const shown = /(\d[\d,]*)–(\d[\d,]*)/.exec(readme.get(variable.name)?.meaning ?? "");
      if (rule === null || shown === null) continue;
      expect(
        shown.slice(1, 3).map((n) => n.replaceAll(",", "")),
        variable.name,
      ).toEqual(rule.slice(1, 3));
      checked++;
    }
    expect(checked, "the README gives some ranges").toBeGreaterThan(0);
  });

  it("declares every default so that its own rule accepts it", () => {
    for (const variable of VARIABLES) {
      if (variable.default !== null) expect(variable.schema.safeParse(variable.default).success, variable.name).toBe(true);
    }
  });
});
