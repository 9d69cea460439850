/** JSON answers of the admin API: never cached, UTF-8, typed for the route that sends them. */
import type { TypedResponse } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JSONParsed } from "hono/utils/types";

export const JSON_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "application/json; charset=utf-8",
  "Cache-Control": "no-store",
};

/**
 * A JSON answer; `pretty` indents it for people reading it in a terminal (status, regenerate).
 * Typed like `c.json()`'s answer, so a route's handler is checked against its response schema.
 */
export function jsonResponse<T, S extends ContentfulStatusCode>(body: T, status: S, pretty = false): Response & TypedResponse<JSONParsed<T>, S, "json"> {
  const text = pretty ? `${JSON.stringify(body, null, 2)}\n` : JSON.stringify(body);
  return new Response(text, { status, headers: JSON_HEADERS }) as Response & TypedResponse<JSONParsed<T>, S, "json">;
}
