/** HTTP binding of POST /payment/webhooks/{provider} (200 requests/minute per IP; no key: the signature is the credential). */
import { Elysia } from "elysia";
import type { PaymentDeps } from "./deps.ts";
import { ApiError } from "../errors.ts";
import { errorResponses } from "../http/shapes.ts";
import { applyEvent, parseEvent, verifySignature } from "./webhooks.ts";
import { PaymentEventBody, PaymentEventReceived, PaymentProviderParams } from "./model.ts";

export function paymentRoutes(ctx: PaymentDeps) {
  const { sql, clock, config, log } = ctx;
  return new Elysia({ tags: ["Payments"] }).post(
    "/payment/webhooks/:provider",
    async ({ params, body, request }) => {
      if (params.provider !== config.paymentProvider || !config.paymentWebhookSecret) {
        throw new ApiError("NOT_FOUND", `no payment provider "${params.provider}" is configured (MEDIABOX_PAYMENT_PROVIDER, MEDIABOX_PAYMENT_WEBHOOK_SECRET)`);
      }
      const raw = typeof body === "string" ? body : "";
      const header = request.headers.get("webhook-signature") ?? request.headers.get("stripe-signature");
      verifySignature(header, raw, config.paymentWebhookSecret, clock.now(), config.paymentWebhookToleranceSeconds);
      const event = parseEvent(raw);
      const outcome = await applyEvent(sql, clock, params.provider, event, raw);
      log.info("payment webhook", { provider: params.provider, event_id: event.id, type: event.type, outcome });
      return { received: true, event_id: event.id, outcome };
    },
    {
      // The signature covers the exact bytes, so the body is read as text and parsed after the check.
      parse: "text",
      params: PaymentProviderParams,
      body: PaymentEventBody,
      response: {
        200: PaymentEventReceived,
        ...errorResponses([400, 401, 404, 429], { public: true }),
      },
      detail: {
        summary: "Payment provider webhook",
        description:
          "Header `Webhook-Signature: t=<unix seconds>,v1=<hex>` (or `Stripe-Signature`), v1 = HMAC-SHA256(secret, `<t>.<raw body>`); more than MEDIABOX_PAYMENT_WEBHOOK_TOLERANCE_SECONDS away is refused. " +
          "Body `{id, type, created, data: {organization_id, tier, status}}`: `subscription.created|updated` set the organization's tier (a lapsed status sets FREE), `subscription.deleted` sets FREE, other types are stored and ignored. " +
          "Idempotent by id. 401 WEBHOOK_SIGNATURE_INVALID, 400 for a signed but malformed body, 404 for another provider. 200 requests/minute per IP.",
      },
    },
  );
}
