/** Plain-text answers that are not documents: 404s with their reason, and errors. */

export function notFound(reason: string): Response {
  return new Response(`404 Not Found: ${reason}\n`, {
    status: 404,
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "public, max-age=60", "X-Robots-Tag": "noindex" },
  });
}

export function plainError(status: number, message: string): Response {
  return new Response(`${message}\n`, {
    status,
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
  });
}
