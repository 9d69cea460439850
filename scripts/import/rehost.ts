/** A record input moved to another origin: its loc, and hreflang hrefs on the loc's own origin. */
export function rehost(input: Record<string, unknown>, origin: string): Record<string, unknown> {
  const loc = input["loc"];
  if (typeof loc !== "string") return input;
  const match = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(loc);
  if (match === null) return input;
  const from = match[0];
  const out: Record<string, unknown> = { ...input, loc: origin + loc.slice(from.length) };
  if (Array.isArray(input["alternates"])) {
    out["alternates"] = input["alternates"].map((a: unknown) => {
      const href = (a as { href?: unknown })?.href;
      return typeof href === "string" && href.startsWith(from) ? { ...(a as object), href: origin + href.slice(from.length) } : a;
    });
  }
  return out;
}
