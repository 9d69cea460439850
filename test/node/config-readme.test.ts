/** The README's configuration tables list exactly the declared variables and secrets, with their defaults. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Variable } from "../../src/config/variable.ts";
import { VARIABLES } from "../../src/config/variables.ts";

const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

/** name → default cell of the table whose header row starts with `| ${first} | default |`. */
function table(first: "variable" | "secret"): Map<string, string> {
  const lines = README.split("\n");
  const header = lines.findIndex((line) => line.startsWith(`| ${first} | default |`));
  expect(header, `README has a "| ${first} | default |" table`).toBeGreaterThanOrEqual(0);
  const rows = new Map<string, string>();
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break;
    const [name = "", fallback = ""] = line
      .split("|")
      .slice(1)
      .map((cell) => cell.trim());
    const bare = /^`([A-Z0-9_]+)`$/.exec(name);
    expect(bare, `one variable per row: ${line}`).not.toBeNull();
    expect(rows.has(bare![1]!), `${bare![1]} listed twice`).toBe(false);
    rows.set(bare![1]!, fallback);
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
      for (const variable of declared) expect(readme.get(variable.name), variable.name).toBe(shownDefault(variable));
    });
  }

  it("declares every default so that its own rule accepts it", () => {
    for (const variable of VARIABLES) {
      if (variable.default !== null) expect(variable.schema.safeParse(variable.default).success, variable.name).toBe(true);
    }
  });
});
