/**
 * The admin's sessions and audit trail for a URL_SOURCE=kv deployment without a D1 database: kept
 * by each site's writer object (admin-tables.ts), the strongly consistent storage such a site has.
 */
import type { AdminStateStore, AuditEntry, StoredSession } from "../../admin-state/store.ts";
import { type SiteWriters, writerOf } from "./object-protocol.ts";

export class KvAdminStateStore implements AdminStateStore {
  readonly kind = "durable-object" as const;
  readonly #writers: SiteWriters;

  constructor(writers: SiteWriters) {
    this.#writers = writers;
  }

  async createSession(idHash: string, session: StoredSession): Promise<void> {
    await writerOf(this.#writers, session.origin).admin(session.origin, { op: "create-session", idHash, session });
  }

  async session(origin: string, idHash: string): Promise<StoredSession | null> {
    return (await writerOf(this.#writers, origin).admin(origin, { op: "session", idHash })) as StoredSession | null;
  }

  async revokeSession(origin: string, idHash: string, now: number): Promise<void> {
    await writerOf(this.#writers, origin).admin(origin, { op: "revoke-session", idHash, now });
  }

  async recordAudit(origin: string, entry: AuditEntry): Promise<void> {
    await writerOf(this.#writers, origin).admin(origin, { op: "record-audit", entry });
  }

  async audit(origin: string, limit: number): Promise<AuditEntry[]> {
    return ((await writerOf(this.#writers, origin).admin(origin, { op: "audit", limit })) as AuditEntry[] | null) ?? [];
  }
}
