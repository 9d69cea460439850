/** The admin API under `/sitemap-admin/`: bearer-token protected; 404 when no token is configured. */
import { Hono } from "hono";
import type { AppEnv } from "../app.ts";
import { adminAuth } from "./auth.ts";
import { openApi, urlsApi } from "./urls.ts";
import { regenerate } from "./regenerate.ts";
import { status } from "./status.ts";

export const admin = new Hono<AppEnv>();

admin.use("*", adminAuth);

// Ingest: PUT/DELETE/GET /sitemap-admin/urls (docs/ingest.md), and its OpenAPI description.
admin.route("/urls", urlsApi);
admin.get("/openapi.json", openApi);
admin.get("/status", status); // regeneration progress, runs, manifest summary (docs/regeneration.md)
admin.post("/regenerate", regenerate); // run a bounded regeneration now (docs/regeneration.md)
