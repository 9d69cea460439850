// The npm registry reachable from this project's build machines lacks some prebuilt platform
// packages (workerd's, biome's and swc's for macOS, Windows, musl …), so `npm install` here leaves
// them out of package-lock.json and `npm ci` then refuses the lock ("Missing: … from lock file").
// This adds every missing optional platform entry, guarded by os/cpu (and libc for musl builds), so
// npm skips them on machines they are not for and fetches them by version on those they are.
// Run after `npm install` changes the lock:
//   node scripts/lock-platforms.mjs
import { readFileSync, writeFileSync } from "node:fs";

const OS = [
  ["darwin", "darwin"],
  ["win32", "win32"],
  ["windows", "win32"],
  ["android", "android"],
  ["freebsd", "freebsd"],
  ["openharmony", "openharmony"],
  ["linux", "linux"],
];
const CPU = [
  ["arm64", "arm64"],
  ["aarch64", "arm64"],
  ["x64", "x64"],
  ["64", "x64"],
  ["ia32", "ia32"],
  ["arm", "arm"],
  ["ppc64", "ppc64"],
  ["s390x", "s390x"],
  ["riscv64", "riscv64"],
];

/** os, cpu and libc of a platform package, read from its name (e.g. @swc/core-linux-x64-musl); null if it names none. */
function platformOf(name) {
  const parts = name.split("/").pop().split("-");
  const os = OS.find(([token]) => parts.includes(token))?.[1];
  const cpu = CPU.find(([token]) => parts.includes(token))?.[1];
  if (!os || !cpu) return null;
  const libc = parts.includes("musl") ? ["musl"] : os === "linux" && parts.includes("gnu") ? ["glibc"] : undefined;
  return { os: [os], cpu: [cpu], ...(libc ? { libc } : {}) };
}

const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const packages = lock.packages;
let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  if (!entry.optionalDependencies) continue;
  // The folder the package sits in: its platform packages go beside it, or at the top.
  const dir = path.slice(0, path.lastIndexOf("node_modules/") + "node_modules/".length);
  for (const [name, version] of Object.entries(entry.optionalDependencies)) {
    const platform = platformOf(name);
    if (!platform) continue;
    // npm resolves a dependency from the nearest node_modules up the tree: look where it would.
    const candidates = [`${path}/node_modules/${name}`, `${dir}${name}`, `node_modules/${name}`];
    if (candidates.some((c) => packages[c]?.version === version)) continue;
    const target = packages[`node_modules/${name}`] ? `${dir}${name}` : `node_modules/${name}`;
    packages[target] = { version, ...platform, dev: entry.dev ?? false, optional: true };
    if (!entry.dev) delete packages[target].dev;
    added++;
  }
}
const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0)));
lock.packages = sorted;
writeFileSync("package-lock.json", `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-platforms: added ${added} optional platform entries`);
