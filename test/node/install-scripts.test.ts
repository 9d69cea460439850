/**
 * Every dependency with an install script is decided in package.json's `allowScripts` (npm ≥ 11.19
 * runs an undecided one with a warning at the end of every install, and later npm releases block
 * it): a dependency added with an install script fails here until someone approves or denies it.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as {
  packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
};

/** Whether an `allowScripts` key (`name`, `name@version`) covers the package. */
const covers = (key: string, name: string, version: string | undefined): boolean => key === name || key === `${name}@${version}`;

describe("dependency install scripts", () => {
  it("each one is approved or denied in package.json's allowScripts", () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== "" && entry.hasInstallScript)
      .map(([path, entry]) => ({ name: path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length), version: entry.version }));
    expect(withScripts.length).toBeGreaterThan(0);
    const decisions = Object.keys(pkg.allowScripts ?? {});
    const undecided = withScripts.filter(({ name, version }) => !decisions.some((key) => covers(key, name, version)));
    expect(undecided).toEqual([]);
  });

  it("approves only node's (it places the Node 24 binary the npm scripts run on)", () => {
    expect(Object.entries(pkg.allowScripts ?? {}).filter(([, allowed]) => allowed)).toEqual([["node", true]]);
  });
});
