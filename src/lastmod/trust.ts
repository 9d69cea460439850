/**
 * Does a site's <lastmod> look trustworthy? Google and Bing use it only when it is consistently
 * accurate; a CMS that stamps every record with the time it wrote it, or with dates ahead of the
 * clock, teaches them to ignore it. Status (`lastmod`) shows, per section, over the site's newest
 * changes (a bounded sample: the same cost for 100 URLs and 100M), how many records carry a lastmod
 * within a minute of their own write and how many a lastmod in the future. Per section only: the
 * shape has no place for a mirror's records apart from the section they are in.
 *
 * Reads only the record store's port (`store.sample`, one bounded read; a partitioned site reads
 * each partition's share of the bound).
 */
import { DatabaseListError } from "../store/errors.ts";
import type { RecordStore, SampledRecord } from "../store/port.ts";

/** Records sampled per site, whatever its size (a partitioned site splits it among its partitions). */
export const LASTMOD_SAMPLE = 1_000;
/** A lastmod this close to the record's change stamp (either side) was written with it. */
const SAME_WRITE_MS = 60_000;
/** A lastmod further ahead than this is in the future (beyond a writer's clock skew). */
const FUTURE_SKEW_MS = 5 * 60_000;

interface LastmodSection {
  name: string;
  /** Live records of the section among the site's newest changes. */
  sampled: number;
  /** Of them, those whose lastmod is within 60 s of their change stamp. */
  sameMinuteAsWrite: number;
  /** Of them, those whose lastmod is more than 5 minutes ahead of `now`. */
  future: number;
}

/** null: the store cannot sample its newest changes, or a partitioned site's database list does not match (shown under `partitions`). */
type LastmodTrust = { sections: LastmodSection[] } | null;

export async function lastmodTrust(store: Pick<RecordStore, "sample">, origin: string, now: number): Promise<LastmodTrust> {
  if (!store.sample) return null;
  let records: SampledRecord[];
  try {
    records = await store.sample.newest(origin, LASTMOD_SAMPLE);
  } catch (err) {
    if (err instanceof DatabaseListError) return null;
    throw err;
  }
  const sections = new Map<string, LastmodSection>();
  for (const record of records) {
    let section = sections.get(record.section);
    if (!section) sections.set(record.section, (section = { name: record.section, sampled: 0, sameMinuteAsWrite: 0, future: 0 }));
    section.sampled++;
    // Normalised W3C datetimes (a date alone is its first instant, UTC).
    const at = record.lastmod ? Date.parse(record.lastmod) : Number.NaN;
    if (Number.isNaN(at)) continue;
    if (Math.abs(at - record.updatedAt) <= SAME_WRITE_MS) section.sameMinuteAsWrite++;
    if (at > now + FUTURE_SKEW_MS) section.future++;
  }
  return { sections: [...sections.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
}
