/**
 * After an import that changed something: POST /sitemap-admin/regenerate, which regenerates the
 * site the request is sent to (the target's own origin). Other sites' sitemaps follow at their
 * next cron run. A failure here is a warning: the records are stored either way.
 */
import { type AdminClient, type ApiAnswer, ClientError } from "./client.ts";
import type { Progress } from "./progress.ts";

/** Whether the regeneration ran (null: the target's origin changed nothing, so none was asked). */
export async function regenerate(client: AdminClient, url: string, changedOrigins: ReadonlySet<string>, progress: Progress): Promise<boolean | null> {
  const target = new URL(url).origin;
  for (const origin of changedOrigins) {
    if (origin !== target) {
      progress.message(`note: ${origin}'s sitemaps update at the Worker's next cron run (or POST ${origin}/sitemap-admin/regenerate)`);
    }
  }
  if (!changedOrigins.has(target)) return null;
  let answer: ApiAnswer;
  try {
    answer = await client.request("POST", "sitemap-admin/regenerate");
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    progress.message(`warning: regeneration failed (${err.message}); the records are stored, the cron will pick them up`);
    return false;
  }
  if (answer.status === 200) progress.message(`regenerated the sitemaps: ${answer.text.slice(0, 300)}`);
  else if (answer.status === 404) progress.message("this Worker has no POST /sitemap-admin/regenerate: its cron will update the sitemaps");
  else progress.message(`warning: POST /sitemap-admin/regenerate answered ${answer.status}; the records are stored, the cron will pick them up`);
  return answer.status === 200;
}
