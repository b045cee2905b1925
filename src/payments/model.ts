/** POST /payment/webhooks/{provider}'s request and response schemas (TypeBox). */
import { t } from "elysia";

export const PaymentProviderParams = t.Object({ provider: t.String({ maxLength: 32 }) });

/** Read as text: the signature covers the exact bytes, parsed after the check. */
export const PaymentEventBody = t.String({ description: "The event as JSON, exactly the bytes signed: {id, type, created, data: {organization_id, tier, status}}" });

export const PaymentEventReceived = t.Object({
  received: t.Boolean(),
  event_id: t.String(),
  outcome: t.String({ description: "tier_changed, ignored, unknown_organization, stale (an older event than one applied) or duplicate (already received)" }),
});
