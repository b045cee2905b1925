/**
 * Concurrent uploads per organization ("Concurrent uploads" in the tier table). An upload
 * request holds one slot from its first byte to its response; when all are taken the caller
 * gets 429 with Retry-After (backpressure) instead of queueing unbounded work. One process counts
 * in memory (LocalUploadSlots); processes sharing a database count there (shared-upload-slots.ts).
 */
import { ApiError } from "../errors.ts";
import { TIER_LIMITS, type Tier } from "../tenancy/tiers.ts";

export interface UploadSlots {
  /** Upload intents being completed by this process now; a second concurrent complete or an abort gets 409. */
  readonly completingIntents: Set<string>;
  /** Runs `work` holding one of the organization's slots (429 before it starts when none is free). */
  hold<T>(owner: { orgId: string; tier: Tier }, work: () => Promise<T>): Promise<T>;
}

/** The 429 of an organization at its tier's limit. */
export function uploadBackpressure(inProgress: number, tier: Tier, limit: number): ApiError {
  return new ApiError(
    "UPLOAD_BACKPRESSURE",
    `${inProgress} uploads are already in progress for this organization (the ${tier} limit is ${limit}); retry shortly`,
    { "retry-after": "2" },
  );
}

export class LocalUploadSlots implements UploadSlots {
  private readonly inUse = new Map<string, number>();
  readonly completingIntents = new Set<string>();

  /** Returns the release function; throws 429 when the organization is at its limit. */
  acquire(orgId: string, tier: Tier): () => void {
    const limit = TIER_LIMITS[tier].concurrentUploads;
    const current = this.inUse.get(orgId) ?? 0;
    if (limit !== null && current >= limit) throw uploadBackpressure(current, tier, limit);
    this.inUse.set(orgId, current + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.inUse.get(orgId) ?? 1) - 1;
      if (n <= 0) this.inUse.delete(orgId);
      else this.inUse.set(orgId, n);
    };
  }

  async hold<T>(owner: { orgId: string; tier: Tier }, work: () => Promise<T>): Promise<T> {
    const release = this.acquire(owner.orgId, owner.tier);
    try {
      return await work();
    } finally {
      release();
    }
  }

  inFlight(orgId: string): number {
    return this.inUse.get(orgId) ?? 0;
  }
}
