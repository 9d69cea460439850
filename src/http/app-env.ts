/**
 * The Hono environment every route and middleware shares, and the factory that types them. Its
 * own module so that routers (src/admin, the document routes) import it without importing the app.
 */
import { createFactory } from "hono/factory";
import type { Principal } from "../admin/auth/principal.ts";
import type { RefusalReason } from "../admin-state/store.ts";
import type { Services } from "../services-type.ts";

export type AppEnv = {
  Bindings: Env;
  Variables: {
    /** Config and adapters for this env (src/services.ts). */
    services: Services;
    /** The configured site this request is for (its URL's origin). */
    origin: string;
    /** Who an admin request is signed in as (src/admin/auth.ts); unset before sign-in. */
    principal: Principal | undefined;
    /** The request is a dashboard action (a form), answered with a way back to the dashboard. */
    dashboardAction: boolean | undefined;
    /** Why the admin refused this signed-in request: counted apart from the audit trail (src/admin/audit.ts). */
    refusal: RefusalReason | undefined;
    /** A credential that signs no one in here but is one elsewhere (another site's token): who its refusal is counted under (src/admin/audit.ts). */
    refusedCredential: string | undefined;
    /** Set when the registered site was deleted while the request was read: no audit row of an origin being purged (src/admin/still-registered.ts). */
    siteGone: boolean | undefined;
  };
};

export const factory = createFactory<AppEnv>();
