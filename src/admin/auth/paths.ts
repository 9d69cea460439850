/** Where the admin's pages live: the API's base path, the dashboard, its stylesheet and the sign-in form. */
export const ADMIN_PATH = "/sitemap-admin";
/** The dashboard: the admin's root (`/sitemap-admin/`), and the same page under a name. */
export const DASHBOARD_PATHS: readonly string[] = [`${ADMIN_PATH}/`, `${ADMIN_PATH}/dashboard`];
export const STYLESHEET_PATH = `${ADMIN_PATH}/dashboard.css`;
export const SIGN_IN_PATH = `${ADMIN_PATH}/sign-in`;
export const SIGN_OUT_PATH = `${ADMIN_PATH}/sign-out`;
const STATUS_PATH = `${ADMIN_PATH}/status`;
/** The platform's page of registered sites (src/admin/dashboard/platform.ts). */
const PLATFORM_PATH = `${ADMIN_PATH}/platform`;
/** What a browser credential may read (GET/HEAD): the dashboard, the status and the platform's page, nothing else. */
export const BROWSER_READABLE: readonly string[] = [...DASHBOARD_PATHS, STATUS_PATH, PLATFORM_PATH];
/** The dashboard's one action, "regenerate now": a form posting to the API route with its CSRF token. */
export const REGENERATE_PATH = `${ADMIN_PATH}/regenerate`;
/** Writes a browser credential may make, each from a dashboard form: method and path. */
export const DASHBOARD_ACTIONS: readonly string[] = [`POST ${REGENERATE_PATH}`];
