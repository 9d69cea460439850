/** How the app answers what no handler answered: thrown errors and unknown paths. */
import type { ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { ADMIN_PATH } from "../admin/auth/paths.ts";
import { databaseListFailed } from "../admin/errors.ts";
import { ConfigError } from "../config.ts";
import { ManifestPendingError } from "../sitemaps.ts";
import { DatabaseListError } from "../store/errors.ts";
import type { AppEnv } from "./app-env.ts";
import { notFound, plainError } from "./respond.ts";

/** How long a client should wait after a 503 of ours: a deploy that fixes the configuration takes about this long. */
const RETRY_AFTER_SECONDS = 300;

/**
 * One error handler for the whole app: an HTTPException renders itself (the admin API's errors
 * carry their JSON body). A bad core configuration is logged with the variable and its rule and
 * answered `503` with `Retry-After` and a body that names nothing of ours: a crawler backs off and
 * keeps what it had, and the public learns nothing about the deployment. A site whose manifest is
 * too large for a request to build (src/sitemaps.ts `currentManifest`; its regeneration was asked
 * for it) is a 503 with the Retry-After the build needs. A partitioned site whose SITE_DATABASES
 * list does not match its partitions (src/partitions/database-list.ts) is, like a bad variable, a
 * 503 naming nothing, and a JSON 503 naming the list to the admin API. Anything else is logged and
 * a bare 500.
 */
export const onError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof HTTPException) return err.getResponse();
  if (err instanceof DatabaseListError && (c.req.path === ADMIN_PATH || c.req.path.startsWith(`${ADMIN_PATH}/`))) {
    return databaseListFailed(err, "nothing was done").getResponse();
  }
  if (err instanceof ManifestPendingError) {
    const response = plainError(503, "503 Service Unavailable: this sitemap is being built; retry later");
    response.headers.set("Retry-After", String(err.retryAfterSeconds));
    return response;
  }
  if (err instanceof ConfigError || err instanceof DatabaseListError) {
    console.error(err.message);
    const response = plainError(503, "503 Service Unavailable");
    response.headers.set("Retry-After", String(RETRY_AFTER_SECONDS));
    return response;
  }
  console.error("unhandled error", err);
  return plainError(500, "500 Internal Server Error");
};

export const onNotFound: NotFoundHandler<AppEnv> = () => notFound("no such sitemap path");
