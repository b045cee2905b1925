/** The webhook routes' request and response schemas (TypeBox). */
import { t } from "elysia";
import { Nullable, OneOf, Timestamp, Uuid } from "../http/shapes.ts";
import { WEBHOOK_EVENTS } from "./webhooks.ts";

const webhookFields = {
  id: t.String({ format: "uuid" }),
  url: t.String(),
  events: t.Array(t.String()),
  description: Nullable(t.String()),
  enabled: t.Boolean(),
  secret_hint: t.String({ description: "The secret's last four characters" }),
  created_by: Nullable(t.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
  deliveries: t.Object({ pending: t.Integer(), delivered: t.Integer(), failed: t.Integer() }),
};
export const WebhookSchema = t.Object(webhookFields, { title: "Webhook" });
export const WebhookWithSecret = t.Object({ ...webhookFields, secret: t.String({ description: "Shown only now: store it to verify signatures" }) }, { title: "WebhookWithSecret" });

export const DeliverySchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    webhook_id: t.String({ format: "uuid" }),
    url: t.String(),
    event_id: t.String(),
    event_type: t.String(),
    status: t.String({ description: "pending, delivered, or failed (attempts used up: the dead-letter list)" }),
    attempts: t.Integer(),
    max_attempts: t.Integer(),
    last_status_code: Nullable(t.Integer()),
    last_error: Nullable(t.String()),
    next_attempt_at: Nullable(Timestamp),
    job_id: Nullable(t.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    delivered_at: Nullable(Timestamp),
    payload: t.Unknown({ description: "The event body sent" }),
    attempt_log: t.Array(t.Object({ attempt: t.Integer(), attempted_at: Timestamp, status_code: Nullable(t.Integer()), error: Nullable(t.String()), duration_ms: t.Integer() })),
  },
  { title: "WebhookDelivery" },
);

const Events = t.Array(t.String(), { error: "events must be an array of strings", description: `Any of ${WEBHOOK_EVENTS.join(", ")}` });
const Url = t.String({ maxLength: 4096, error: "url must be a string", description: "http(s); the link crawler's address rules apply" });
const Description = t.String({ error: "description must be a string or null" });
export const DeliveryStatus = OneOf(["pending", "delivered", "failed"] as const);
export const NewWebhook = t.Object({
  url: Url,
  events: Events,
  description: t.Optional(Nullable(Description)),
  enabled: t.Optional(t.Boolean({ error: "enabled must be true or false" })),
  secret: t.Optional(t.String({ error: "secret must be a string", description: "16-256 characters; generated when left out" })),
});
export const WebhookChange = t.Object({
  url: t.Optional(Url),
  events: t.Optional(Events),
  description: t.Optional(Nullable(Description)),
  enabled: t.Optional(t.Boolean({ error: "enabled must be true or false" })),
});
export const webhookParams = t.Object({ webhook_id: Uuid("webhook_id") });
export const deliveryParams = t.Object({ delivery_id: Uuid("delivery_id") });
