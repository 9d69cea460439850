/** How the app answers what no handler answered: thrown errors and unknown paths. */
import type { ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { ConfigError } from "../config.ts";
import type { AppEnv } from "./app-env.ts";
import { notFound, plainError } from "./respond.ts";

/**
 * One error handler for the whole app: an HTTPException renders itself (the admin API's errors
 * carry their JSON body); a bad configuration is a 500 naming the variable and the rule (the
 * message never holds the value); anything else is logged and a bare 500.
 */
export const onError: ErrorHandler<AppEnv> = (err) => {
  if (err instanceof HTTPException) return err.getResponse();
  if (err instanceof ConfigError) {
    console.error(err.message);
    return plainError(500, err.message);
  }
  console.error("unhandled error", err);
  return plainError(500, "500 Internal Server Error");
};

export const onNotFound: NotFoundHandler<AppEnv> = () => notFound("no such sitemap path");
