/** Why a mirror pass failed, in words fit for /sitemap-admin/status (URLs shown without their query). */
export class MirrorFailure extends Error {
  override readonly name = "MirrorFailure";
}

/** A URL as status and logs show it: no query or fragment (they may carry tokens), no credentials. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(not a URL)";
  }
}
