/** Where the admin's pages live: the API's base path, the dashboard, its stylesheet and the sign-in form. */
export const ADMIN_PATH = "/sitemap-admin";
/** The dashboard: the admin's root (`/sitemap-admin/`), and the same page under a name. */
export const DASHBOARD_PATHS: readonly string[] = [`${ADMIN_PATH}/`, `${ADMIN_PATH}/dashboard`];
export const STYLESHEET_PATH = `${ADMIN_PATH}/dashboard.css`;
export const SIGN_IN_PATH = `${ADMIN_PATH}/sign-in`;
export const SIGN_OUT_PATH = `${ADMIN_PATH}/sign-out`;
