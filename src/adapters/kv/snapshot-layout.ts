/**
 * The KV key grammar of snapshots (src/adapters/kv/snapshot-store.ts); nothing outside this
 * adapter spells it: the rest of the app holds a snapshot handle (a head key) as an opaque string.
 *
 * Heads are content-addressed: `s1/{origin}/{section}/{n}/{version}` for a shard,
 * `s1/{origin}/_index/{version}` for the index (no section name starts with "_"), each followed by
 * `+{parts id}` when the bytes are stored in parts under `s1/_parts/{parts id}/{i}`. The parts id
 * is random (the version is known only once the render ends), and whoever holds a head knows its
 * parts (to serve them, to keep them from the garbage collection, to delete them with it).
 */
import type { SnapshotDocument } from "../../snapshots/store.ts";

/** Bumped when the stored form changes (compression, framing): old keys are then simply unused. */
const SNAPSHOT_FORMAT = "s1";

/** `s1/{origin}/`: the prefix of every head of a site. */
export function siteHeadPrefix(origin: string): string {
  return `${SNAPSHOT_FORMAT}/${origin}/`;
}

/** The head key of a document stored whole; ≤ ~330 bytes for any valid origin (KV keys ≤ 512). */
function documentKey(document: SnapshotDocument): string {
  const site = siteHeadPrefix(document.origin);
  return document.kind === "index" ? `${site}_index/${document.version}` : `${site}${document.section}/${document.n}/${document.version}`;
}

/** The head key of a document: its document key, plus the parts' id when it has parts. */
export function headKey(document: SnapshotDocument, partsId: string | null): string {
  return partsId ? `${documentKey(document)}+${partsId}` : documentKey(document);
}

/** Whether a head key holds `document` (stored whole or in parts). */
export function isHeadOf(head: string, document: SnapshotDocument): boolean {
  const key = documentKey(document);
  return head === key || head.startsWith(`${key}+`);
}

/** `s1/_parts/{id}/`: the prefix of the parts of one staged document (`{prefix}{i}`, i from 0). */
export function partsPrefix(id: string): string {
  return `${SNAPSHOT_FORMAT}/_parts/${id}/`;
}

/** Whether a key is a parts prefix (registered for the garbage collection before a head took it). */
export function isPartsPrefix(key: string): boolean {
  return key.endsWith("/");
}

const PARTS_ID = /\+([0-9a-f]{32})$/;

/** The parts' prefix of a head key, or null when the head holds all its bytes. */
export function partsOf(head: string): string | null {
  const id = PARTS_ID.exec(head)?.[1];
  return id ? partsPrefix(id) : null;
}

/** A new parts id (random: the document's version is not known while its parts are written). */
export function newPartsId(): string {
  return crypto.randomUUID().replaceAll("-", "");
}
