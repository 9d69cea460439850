/** What the dashboard draws: the status document of one site (src/admin/status.ts `siteStatus`). */
import type { siteStatus } from "../status.ts";

export type DashboardStatus = Awaited<ReturnType<typeof siteStatus>>;
