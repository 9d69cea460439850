/**
 * The sign-in page: what anyone without valid credentials gets for a page of the admin (401),
 * with no site data on it. With an admin token, a form that takes it (POST /sitemap-admin/sign-in
 * sets the session cookie); with Cloudflare Access only, a pointer to sign in through Access.
 */
import { SIGN_IN_PATH } from "../auth/paths.ts";
import { html } from "./html.ts";
import { page } from "./layout.ts";

export interface SignInOptions {
  /** A form for the admin token is offered (ADMIN_TOKEN is set). */
  tokenForm: boolean;
  /** Cloudflare Access protects the admin. */
  access: boolean;
  /** The last attempt was refused. */
  refused: boolean;
  /** Too many failed sign-ins from this client: 429, try again after this many seconds. */
  retryAfter?: number;
  /** Refused before the token was looked at (a sign-in from another site): 403, saying why. */
  forbidden?: string;
}

export function signInPage(options: SignInOptions): Response {
  const body = html`<main class="narrow">
<h1>Sitemaps admin</h1>
${
  options.forbidden
    ? html`<p class="bad" role="alert">${options.forbidden}</p>`
    : options.retryAfter
      ? html`<p class="bad" role="alert">Too many failed sign-ins: try again in ${options.retryAfter} seconds.</p>`
      : options.refused
        ? html`<p class="bad" role="alert">That token was not accepted.</p>`
        : ""
}
${
  options.tokenForm
    ? html`<form method="post" action="${SIGN_IN_PATH}">
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`
    : ""
}
${options.access ? html`<p>This admin is protected by Cloudflare Access: open it through your Access sign-in.</p>` : ""}
</main>`;
  if (options.forbidden) return page("Sign in · sitemaps admin", body, 403);
  if (options.retryAfter) return page("Sign in · sitemaps admin", body, 429, { "Retry-After": String(options.retryAfter) });
  return page("Sign in · sitemaps admin", body, 401);
}
