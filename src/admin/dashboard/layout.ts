/**
 * The admin pages' shell and headers: a strict Content-Security-Policy (no script at all; styles
 * only from the stylesheet route; images only inline SVG data), never cached, never framed.
 */
import { STYLESHEET_PATH } from "../auth/paths.ts";
import { type Html, html } from "./html.ts";

export const PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "text/html; charset=utf-8",
  "Cache-Control": "no-store",
  "Content-Security-Policy": PAGE_CSP,
  "X-Content-Type-Options": "nosniff",
  // Not "no-referrer": under it a browser sends `Origin: null` with the page's own forms, and the
  // admin refuses a write whose Origin is not the site's (src/admin/auth/browser-guard.ts). Nothing
  // leaves for other sites either way.
  "Referrer-Policy": "same-origin",
  "X-Frame-Options": "DENY",
};

export function page(title: string, body: Html, status = 200, headers: Record<string, string> = {}): Response {
  const doc = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
${body}
</body>
</html>
`;
  return new Response(doc.text, { status, headers: { ...PAGE_HEADERS, ...headers } });
}
