/** Why a mirror pass failed, in words fit for /sitemap-admin/status (URLs shown without their query). */
export class MirrorFailure extends Error {
  override readonly name = "MirrorFailure";
}

/**
 * A URL as status, syncs and logs show it: the query (it may carry a token) replaced by `?…`, no
 * fragment, no credentials.
 */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}${u.search === "" ? "" : "?…"}`;
  } catch {
    return "(not a URL)";
  }
}

/** A sync's source as the admin API shows it: a mirror's (`mirror:<url>`) with its URL shown as above. */
export function shownSource(source: string | null): string | null {
  return source?.startsWith("mirror:") ? `mirror:${shownUrl(source.slice("mirror:".length))}` : source;
}

/** `text` with every appearance of `url`'s query and credentials replaced, for logs of errors that may quote it. */
export function scrubbed(text: string, url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return text;
  }
  let out = text;
  for (const secret of [u.search.slice(1), u.username, u.password]) {
    if (secret.length > 0) out = out.split(secret).join("…");
  }
  return out;
}
