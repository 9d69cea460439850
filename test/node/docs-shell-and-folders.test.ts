/**
 * Issue 52 review (break52), items 2 and 3 read as a newcomer reads them:
 * - the shell commands of the README and of docs/crawlers.md "Locally" paste into the shell a Mac
 *   opens (zsh since macOS 10.15), where an unquoted word holding `?`, `*` or `[` is a pattern
 *   that must match a file, or the command stops with "no matches found" and runs nothing;
 * - docs/architecture.md maps every folder of src/, the nested ones too (test/node/docs-map.test.ts
 *   checks the top-level ones): a nested folder is named by its path under its parent (`view/`).
 */
import { readFileSync, readdirSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}${path}`, "utf8");

/** The command lines of a markdown file's ```sh blocks, comments and blank lines left out. */
function shellLines(markdown: string): string[] {
  return [...markdown.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)]
    .flatMap((m) => m[1]!.split("\n"))
    .map((line) => line.replace(/(^|\s)#.*$/, "").trim())
    .filter(Boolean);
}

/** The words of a command line that hold an unquoted glob character (zsh's NOMATCH stops the command). */
function unquotedGlobs(line: string): string[] {
  const found: string[] = [];
  let word = "";
  let glob = false;
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
      word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word += c;
    } else if (c === "\\") {
      word += c + (line[++i] ?? "");
    } else if (/\s/.test(c) || c === "&" || c === ";" || c === "|") {
      if (glob) found.push(word);
      word = "";
      glob = false;
    } else {
      if (c === "?" || c === "*" || c === "[") glob = true;
      word += c;
    }
  }
  if (glob) found.push(word);
  return found;
}

describe("the docs' shell commands paste into zsh (a Mac's shell)", () => {
  it("the reader itself finds what zsh would refuse", () => {
    expect(unquotedGlobs("curl http://localhost:8787/__scheduled?cron=17+*+*+*+*")).toEqual(["http://localhost:8787/__scheduled?cron=17+*+*+*+*"]);
    expect(unquotedGlobs(`curl "http://localhost:8787/__scheduled?cron=17+*+*+*+*"`)).toEqual([]);
    expect(unquotedGlobs("npm install && npm start")).toEqual([]);
  });

  for (const file of ["README.md", "docs/crawlers.md"]) {
    it(`${file}: no command holds an unquoted ?, * or [`, () => {
      const lines = shellLines(read(file));
      expect(lines.length).toBeGreaterThan(0);
      const refused = lines.filter((line) => unquotedGlobs(line).length > 0);
      expect(refused).toEqual([]);
    });
  }
});

describe("docs/architecture.md maps the nested folders of src/ too", () => {
  it("names every folder under a top-level src/ folder by its path", () => {
    const architecture = read("docs/architecture.md");
    const nested: string[] = [];
    const walk = (dir: string, depth: number) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const path = `${dir}/${entry.name}`;
        if (depth >= 1) nested.push(relative(`${ROOT}src`, path));
        walk(path, depth + 1);
      }
    };
    walk(`${ROOT}src`, 0);
    expect(nested.length).toBeGreaterThan(5);
    // `formats/view/` or, inside its parent's cell, `view/` (as `middleware/site.ts` is named).
    const unnamed = nested.filter((rel) => {
      const sub = rel.split("/").slice(1).join("/");
      return !architecture.includes(`${rel}/`) && !new RegExp(`[\\s\`(]${sub.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/`).test(architecture);
    });
    expect(unnamed).toEqual([]);
  });
});
