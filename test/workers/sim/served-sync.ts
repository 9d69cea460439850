/** The simulation's full sync right after a flip (issue 49, defect 1): see `syncServed`. */
import { call } from "../support.ts";
import { AUTH, Violation } from "./checks.ts";

type Admin = (method: string, path: string, body?: unknown) => Promise<{ status: number; json: Record<string, unknown> }>;

/**
 * A full sync of the whole site that re-sends exactly what is served (as the admin API answers
 * it), committed at maxDelete 0: it must delete nothing. The model is unchanged (every record is
 * re-sent as stored: nothing is written); the checks after it find every loc still served.
 */
export async function syncServed(env: Env, origin: string, locs: readonly string[], admin: Admin, where: string): Promise<void> {
  const served: { loc: string; lastmod?: string }[] = [];
  for (const loc of locs) {
    const res = await call(env, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(loc)}`, { headers: AUTH });
    if (res.status !== 200) continue;
    const { lastmod } = (await res.json()) as { lastmod?: string | null };
    served.push(lastmod ? { loc, lastmod } : { loc });
  }
  if (served.length === 0) return;
  const opened = await admin("POST", "/syncs", { sites: [origin] });
  // The program's own syncs may have taken every open sync the site may have: nothing to check then.
  if (opened.status === 429) return;
  if (opened.status !== 201) throw new Violation(`${where}: POST /syncs answered ${opened.status}: ${JSON.stringify(opened.json)}`);
  const id = opened.json["id"] as string;
  const batch = await admin("PUT", `/syncs/${id}/urls`, served);
  if (batch.status !== 200) throw new Violation(`${where}: its batch answered ${batch.status}: ${JSON.stringify(batch.json)}`);
  for (let round = 0; round < 20; round++) {
    const res = await admin("POST", `/syncs/${id}/commit`, { maxDelete: 0 });
    if (res.status === 202) continue;
    if (res.status !== 200 || res.json["done"] !== true || res.json["deleted"] !== 0)
      throw new Violation(`${where}: re-sending the ${served.length} served records, its commit answered ${res.status}: ${JSON.stringify(res.json)}`);
    return;
  }
  throw new Violation(`${where}: its commit not done after 20 calls`);
}
