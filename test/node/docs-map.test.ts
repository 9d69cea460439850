/**
 * docs/architecture.md maps every folder of src/ (issue 52: the README's old map missed 14 of 28),
 * read from the tree, so a new folder is caught without anyone remembering it; and the README stays
 * a front page (at most 250 lines) that names the crawler log, the platform API and the cost.
 */
import { readFileSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), "utf8");

describe("the docs' maps of the project", () => {
  it("docs/architecture.md names every src/ folder", () => {
    const architecture = read("docs/architecture.md");
    const folders = readdirSync(new URL("src/", ROOT), { withFileTypes: true }).filter((d) => d.isDirectory());
    expect(folders.length).toBeGreaterThan(20);
    for (const folder of folders) expect(architecture, `src/${folder.name}/`).toContain(`\`src/${folder.name}/`);
  });

  it("the README is a front page: ≤ 250 lines, with the crawler log, the platform API, the cost and the plan", () => {
    const readme = read("README.md");
    expect(readme.split("\n").length).toBeLessThanOrEqual(250);
    for (const part of ["Crawler log", "/sitemap-admin/sites", "What it costs", "Workers Paid", "```mermaid", "npm run deploy"])
      expect(readme).toContain(part);
    // Every docs link in it resolves.
    for (const [, path] of readme.matchAll(/\]\(((?:docs\/)?[\w.-]+\.md)\)/g)) expect(() => read(path!), path).not.toThrow();
  });
});
