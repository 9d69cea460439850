/**
 * The admin's sessions, audit trail, counted refusals and cooldowns for a URL_SOURCE=kv deployment
 * without a D1 database: kept by each site's writer object (admin-tables.ts), the strongly
 * consistent storage such a site has.
 */
import type { AdminStateStore, AuditEntry, RefusalCount, RefusalReason, StoredSession } from "../../admin-state/store.ts";
import { type SiteWriters, writerOf } from "./object-protocol.ts";

export class KvAdminStateStore implements AdminStateStore {
  readonly kind = "durable-object" as const;
  readonly #writers: SiteWriters;

  constructor(writers: SiteWriters) {
    this.#writers = writers;
  }

  async createSession(key: string, session: StoredSession): Promise<void> {
    await writerOf(this.#writers, session.origin).admin(session.origin, { op: "create-session", key, session });
  }

  async session(origin: string, key: string): Promise<StoredSession | null> {
    return (await writerOf(this.#writers, origin).admin(origin, { op: "session", key })) as StoredSession | null;
  }

  async revokeSession(origin: string, key: string, now: number): Promise<void> {
    await writerOf(this.#writers, origin).admin(origin, { op: "revoke-session", key, now });
  }

  async recordAudit(origin: string, entry: AuditEntry): Promise<void> {
    await writerOf(this.#writers, origin).admin(origin, { op: "record-audit", entry });
  }

  async audit(origin: string, limit: number): Promise<AuditEntry[]> {
    return ((await writerOf(this.#writers, origin).admin(origin, { op: "audit", limit })) as AuditEntry[] | null) ?? [];
  }

  async recordRefusal(origin: string, refusal: { at: number; reason: RefusalReason; who: string }): Promise<void> {
    await writerOf(this.#writers, origin).admin(origin, { op: "record-refusal", refusal });
  }

  async refusals(origin: string, limit: number): Promise<RefusalCount[]> {
    return ((await writerOf(this.#writers, origin).admin(origin, { op: "refusals", limit })) as RefusalCount[] | null) ?? [];
  }

  async claimCooldown(origin: string, action: string, now: number, until: number): Promise<number> {
    return (await writerOf(this.#writers, origin).admin(origin, { op: "claim-cooldown", action, now, until })) as number;
  }
}
