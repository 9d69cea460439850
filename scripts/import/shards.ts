/** Where the sitemaps listed in an index are: next to a local index, or relative to a URL. */
import { existsSync, statSync } from "node:fs";
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { InputError, type Opened, isUrl } from "./input.ts";

function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
}

/**
 * Where a `<sitemap><loc>` of an index points: relative to the index (URL or directory). For a
 * local index, an absolute http(s) loc is looked up next to the index first (its path under the
 * index's directory, then its file name), so a downloaded index with its shards imports offline;
 * only when no such file exists is the URL fetched (unless `noFetch`). Local paths never leave the
 * index's directory.
 *
 * A remote index leads only to its own host and the `allowHosts` (--allow-host): otherwise any
 * index on the web could make the CLI fetch from the user's internal network.
 */
export function resolveShard(
  loc: string,
  parent: Opened,
  noFetch: boolean,
  allowHosts: ReadonlySet<string>,
): { target: string; hosts?: ReadonlySet<string> } {
  if (parent.base.kind === "url") {
    let url: URL;
    try {
      url = new URL(loc, parent.base.url);
    } catch {
      throw new InputError(`shard ${loc} is not a URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new InputError(`shard ${loc} is not an http(s) URL`);
    const hosts = new Set([parent.base.url.host, ...allowHosts]);
    if (!hosts.has(url.host)) {
      throw new InputError(
        `shard ${loc} is on ${url.host}, not on the index's host ${parent.base.url.host}: skipped (pass --allow-host ${url.host} to follow it)`,
      );
    }
    return { target: url.href, hosts };
  }
  const dir = parent.base.dir;
  if (isUrl(loc)) {
    const pathname = decodeURIComponent(new URL(loc).pathname);
    for (const candidate of [join(dir, pathname), join(dir, basename(pathname))]) {
      if (inside(dir, candidate) && existsSync(candidate) && statSync(candidate).isFile()) return { target: candidate };
    }
    if (noFetch) throw new InputError(`shard ${loc} is not next to the index (${dir}) and --no-fetch is set`);
    return { target: loc };
  }
  const path = loc.startsWith("file:") ? fileURLToPath(loc) : resolve(dir, loc);
  if (!inside(dir, path)) throw new InputError(`shard ${loc} is outside the index's directory ${dir}`);
  return { target: path };
}
