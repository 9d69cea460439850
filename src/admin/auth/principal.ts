/**
 * Who an admin request is signed in as (src/admin/auth.ts sets it, the audit names it):
 * - `token`: the bearer token (scripts) — reads and writes; ADMIN_TOKEN, the platform's: every site and the registry;
 * - `site-token`: a registered site's own token (docs/tenants.md) — reads and writes its site only;
 * - `access-service`: a Cloudflare Access service token (scripts) — reads and writes;
 * - `session`: the sign-in form's cookie, and `access-user`: a person's Access JWT — both what a
 *   browser carries on every same-origin request, script-made ones included, so they read the
 *   dashboard and status, and write only through a dashboard action with their CSRF token.
 */
export type Principal =
  | { via: "token"; who: string }
  | { via: "site-token"; who: string }
  | { via: "access-service"; who: string }
  | { via: "session"; who: string; csrf: string }
  | { via: "access-user"; who: string; csrf: string };

/** What a browser carries by itself: the cookie, or Access's JWT (Access adds it to every request). */
export const carriedByBrowser = (p: Principal): p is Extract<Principal, { csrf: string }> => p.via === "session" || p.via === "access-user";

/** Authenticated by something Access or the browser attached, not by a header a script had to set. */
export const ambient = (p: Principal): boolean => p.via !== "token" && p.via !== "site-token";
