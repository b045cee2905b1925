/**
 * Subscription tiers and the limits the spec attaches to each ("Limits by tier").
 * `null` means unlimited; the API reports unlimited as -1 where it prints a number.
 */
export const TIERS = ["FREE", "STARTER", "PROFESSIONAL", "ENTERPRISE", "CUSTOM"] as const;
export type Tier = (typeof TIERS)[number];

export interface TierLimits {
  requestsPerMinute: number | null;
  concurrentUploads: number | null;
  batchFiles: number | null;
  aiDescriptionsPerMonth: number | null;
  chatMessagesPerMonth: number | null;
  /** Whether the tier may hold API keys (FREE uses the dashboard only). */
  apiKeys: boolean;
}

export const TIER_LIMITS: Record<Tier, TierLimits> = {
  FREE: { requestsPerMinute: 10, concurrentUploads: 10, batchFiles: 10, aiDescriptionsPerMonth: 10, chatMessagesPerMonth: 10, apiKeys: false },
  STARTER: { requestsPerMinute: 30, concurrentUploads: 20, batchFiles: 50, aiDescriptionsPerMonth: 500, chatMessagesPerMonth: 200, apiKeys: true },
  PROFESSIONAL: { requestsPerMinute: 100, concurrentUploads: 30, batchFiles: 100, aiDescriptionsPerMonth: 2_500, chatMessagesPerMonth: 2_000, apiKeys: true },
  ENTERPRISE: { requestsPerMinute: 500, concurrentUploads: 50, batchFiles: 200, aiDescriptionsPerMonth: 10_000, chatMessagesPerMonth: 500_000, apiKeys: true },
  CUSTOM: { requestsPerMinute: null, concurrentUploads: null, batchFiles: null, aiDescriptionsPerMonth: null, chatMessagesPerMonth: null, apiKeys: true },
};

/** Limits that are the same for every tier. */
export const FIXED_LIMITS = {
  maxBatchPayloadBytes: 2 * 1024 ** 3,
  maxImageBytes: 100 * 1024 ** 2,
  maxDocumentBytes: 50 * 1024 ** 2,
  /** Session-authenticated dashboard requests per minute. */
  dashboardRequestsPerMinute: 300,
} as const;

export function parseTier(raw: string): Tier {
  const upper = raw.trim().toUpperCase();
  if (!(TIERS as readonly string[]).includes(upper)) {
    throw new Error(`unknown tier "${raw}"; expected one of ${TIERS.join(", ")}`);
  }
  return upper as Tier;
}
