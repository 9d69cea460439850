/** Worker entry: the Hono app for requests, and the cron trigger. */
import { app } from "./app.ts";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
