/**
 * The record store the admin API writes and reads through (the port of src/store/port.ts): its one
 * accessor, so wiring it elsewhere touches only this file.
 *
 * Until `services` carries the port (`services.store`), today's writer of the configured source
 * (D1 or KV) is adapted to it here.
 */
import type { Context } from "hono";
import type { RecordExtensions } from "../core/extensions/types.ts";
import type { Changefreq } from "../core/types.ts";
import type { AppEnv } from "../http/app-env.ts";
import type { UrlRow } from "../sources/d1-writer.ts";
import type { FoundRecord, RecordReader, RecordWriter } from "../store/port.ts";

export interface AdminRecordStore {
  readonly reader: Pick<RecordReader, "find">;
  readonly writer: RecordWriter;
}

function foundRecord(row: UrlRow): FoundRecord {
  return {
    key: row.id,
    loc: row.loc,
    origin: row.origin,
    section: row.section,
    lastmod: row.lastmod,
    changefreq: row.changefreq as Changefreq | null,
    priority: row.priority,
    ext: row.ext === null ? null : (JSON.parse(row.ext) as RecordExtensions),
    updatedAt: row.updated_at,
    deleted: row.deleted !== 0,
  };
}

export function recordStore(c: Context<AppEnv>): AdminRecordStore {
  const { config, writer } = c.var.services;
  const atomic = config.urlSource === "d1";
  return {
    reader: {
      async find(loc) {
        const row = await writer.find(loc);
        return row === null ? null : foundRecord(row);
      },
    },
    writer: {
      async upsert(records, now) {
        const { inserted, updated, unchanged, rowsWritten } = await writer.upsert(records, now);
        return { atomic, writes: rowsWritten, inserted, updated, unchanged };
      },
      async delete(locs, now) {
        const { deleted, alreadyDeleted, notFound, rowsWritten } = await writer.delete(locs, now);
        return { atomic, writes: rowsWritten, deleted, alreadyDeleted, notFound };
      },
    },
  };
}
