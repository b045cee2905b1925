/**
 * Concurrent uploads per organization counted in the database, for api processes sharing one
 * (docs/scale-out.md): without it each process would allow the tier's limit on its own, N times
 * it in all. An upload holds a row of upload_slot_leases from its first byte to its response;
 * taking one counts the organization's live rows under a transaction lock named after it, so two
 * processes cannot both take the last slot. The holder refreshes its lease while the upload runs;
 * a process that dies mid-upload frees its slots when their leases lapse.
 */
import type { Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { TIER_LIMITS, type Tier } from "../tenancy/tiers.ts";
import { uploadBackpressure, type UploadSlots } from "./upload-slots.ts";

export interface SharedSlotTimes {
  /** How long a slot outlives its holder's last refresh. */
  leaseMs: number;
  refreshEveryMs: number;
}

const DEFAULT_TIMES: SharedSlotTimes = { leaseMs: 120_000, refreshEveryMs: 30_000 };

export class SharedUploadSlots implements UploadSlots {
  readonly completingIntents = new Set<string>();

  constructor(
    private readonly sql: SqlClient,
    private readonly clock: Clock,
    private readonly times: SharedSlotTimes = DEFAULT_TIMES,
  ) {}

  async hold<T>(owner: { orgId: string; tier: Tier }, work: () => Promise<T>): Promise<T> {
    const limit = TIER_LIMITS[owner.tier].concurrentUploads;
    if (limit === null) return work();
    const id = crypto.randomUUID();
    const refused = await this.sql.transaction(async (tx) => {
      await tx.one(tx.dialect.transactionLock(`upload_slots_${owner.orgId.replace(/[^A-Za-z0-9_]/g, "_")}`));
      const now = this.clock.now();
      await tx.run("DELETE FROM upload_slot_leases WHERE org_id = ? AND expires_at <= ?", [owner.orgId, now]);
      const inProgress = Number((await tx.one<{ n: number | string }>("SELECT count(*) AS n FROM upload_slot_leases WHERE org_id = ?", [owner.orgId]))!.n);
      if (inProgress >= limit) return inProgress;
      await tx.run("INSERT INTO upload_slot_leases (id, org_id, expires_at) VALUES (?, ?, ?)", [id, owner.orgId, now + this.times.leaseMs]);
      return null;
    });
    if (refused !== null) throw uploadBackpressure(refused, owner.tier, limit);
    // A failed refresh is retried at the next tick; the lease outlives several.
    const refresh = setInterval(() => {
      this.sql.run("UPDATE upload_slot_leases SET expires_at = ? WHERE id = ?", [this.clock.now() + this.times.leaseMs, id]).catch(() => {});
    }, this.times.refreshEveryMs);
    try {
      return await work();
    } finally {
      clearInterval(refresh);
      // A release that fails leaves the lease to lapse.
      await this.sql.run("DELETE FROM upload_slot_leases WHERE id = ?", [id]).catch(() => {});
    }
  }
}
