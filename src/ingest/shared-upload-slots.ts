/**
 * Concurrent uploads per organization counted in the database, for api processes sharing one
 * (docs/scale-out.md): without it each process would allow the tier's limit on its own, N times
 * it in all. An upload holds a slot lease (db/slot-leases.ts) from its first byte to its response.
 */
import type { SlotLeases } from "../db/slot-leases.ts";
import { TIER_LIMITS, type Tier } from "../tenancy/tiers.ts";
import { uploadBackpressure, type UploadSlots } from "./upload-slots.ts";

/** The slot scope of an organization's uploads. */
export const uploadScope = (orgId: string) => `upload ${orgId}`;

export class SharedUploadSlots implements UploadSlots {
  readonly completingIntents = new Set<string>();

  constructor(private readonly leases: SlotLeases) {}

  async hold<T>(owner: { orgId: string; tier: Tier }, work: () => Promise<T>): Promise<T> {
    const limit = TIER_LIMITS[owner.tier].concurrentUploads;
    if (limit === null) return work();
    const taken = await this.leases.tryTake(uploadScope(owner.orgId), limit);
    if ("inUse" in taken) throw uploadBackpressure(taken.inUse, owner.tier, limit);
    try {
      return await work();
    } finally {
      await taken.release();
    }
  }
}
