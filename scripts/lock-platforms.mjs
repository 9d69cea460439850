// The npm registry reachable from this project's build machines lacks workerd's macOS and Windows
// binary packages for the pinned versions, so `npm install` here leaves them out of
// package-lock.json and `npm ci` then refuses the lock ("Missing: @cloudflare/workerd-darwin-64").
// This adds the missing optional platform entries (os/cpu-guarded, skipped on Linux, fetched by
// version on the platforms that need them). Run after `npm install` changes the lock:
//   node scripts/lock-platforms.mjs
import { readFileSync, writeFileSync } from "node:fs";

const PLATFORMS = [
  ["darwin-64", "darwin", "x64"],
  ["darwin-arm64", "darwin", "arm64"],
  ["linux-64", "linux", "x64"],
  ["linux-arm64", "linux", "arm64"],
  ["windows-64", "win32", "x64"],
];
const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const packages = lock.packages;
let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  if (!path.endsWith("node_modules/workerd") || !entry.optionalDependencies) continue;
  const base = path.slice(0, -"workerd".length);
  for (const [suffix, os, cpu] of PLATFORMS) {
    const name = `@cloudflare/workerd-${suffix}`;
    const version = entry.optionalDependencies[name];
    if (!version) continue;
    // npm resolves a dependency from the nearest node_modules up the tree: look where it would.
    const candidates = [`${base}${name}`, `node_modules/${name}`];
    if (candidates.some((c) => packages[c]?.version === version)) continue;
    const target = packages[`node_modules/${name}`] ? `${base}${name}` : `node_modules/${name}`;
    packages[target] = { version, cpu: [cpu], dev: true, license: "Apache-2.0", optional: true, os: [os], engines: { node: ">=16" } };
    added++;
  }
}
const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0)));
lock.packages = sorted;
writeFileSync("package-lock.json", `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-platforms: added ${added} workerd platform entries`);
