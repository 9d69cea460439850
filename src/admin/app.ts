/** The admin API under `/sitemap-admin/`: bearer-token protected; 404 when no token is configured. */
import { Hono } from "hono";
import type { AppEnv } from "../app.ts";
import { adminAuth } from "./auth.ts";

export const admin = new Hono<AppEnv>();

admin.use("*", adminAuth);
