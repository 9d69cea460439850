/**
 * Transitional: the admin routers still import `AppEnv` from here. It lives in src/http/app-env.ts
 * (the app itself is src/http/app.ts); delete this file once src/admin imports that module.
 */
export type { AppEnv } from "./http/app-env.ts";
