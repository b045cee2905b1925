/**
 * HTTP binding of /webhooks and /webhook-deliveries (Mediabox extension; docs/automation.md).
 */
import { Elysia, t } from "elysia";
import type { WebhookFeatureDeps } from "./deps.ts";
import { permissions } from "../http/permissions.ts";
import { Nullable, Page, page, pageQuery, Uuid, errorResponses } from "../http/shapes.ts";
import { webhookDeps } from "./delivery.ts";
import {
  createWebhook,
  deleteWebhook,
  emitEvent,
  getDelivery,
  getWebhook,
  listDeliveries,
  listWebhooks,
  retryDelivery,
  rotateSecret,
  TEST_EVENT,
  updateWebhook,
} from "./webhooks.ts";
import { DeliverySchema, DeliveryStatus, NewWebhook, WebhookChange, WebhookSchema, WebhookWithSecret, deliveryParams, webhookParams } from "./model.ts";

export function webhookRoutes(ctx: WebhookFeatureDeps) {
  const { sql } = ctx;
  const deps = webhookDeps(ctx);
  return new Elysia({ tags: ["Webhooks"] })
    .use(permissions)
    .post(
      "/webhooks",
      ({ principal, body, set }) => {
        set.status = 201;
        return createWebhook(deps, principal.orgId, principal.keyId, body);
      },
      {
        permission: "edit",
        body: NewWebhook,
        response: { 201: WebhookWithSecret, ...errorResponses([400]) },
        detail: { summary: "Register a webhook receiver (extension)", description: "The answer carries the signing secret, shown only this once." },
      },
    )
    .get(
      "/webhooks",
      async ({ principal, query }) => {
        const { items, total } = await listWebhooks(sql, principal.orgId, query.limit, query.offset);
        return page(items, total, query.limit, query.offset);
      },
      { permission: "view", query: t.Object(pageQuery(100, 50)), response: { 200: Page(WebhookSchema), ...errorResponses([400]) }, detail: { summary: "List webhooks (extension)" } },
    )
    .get("/webhooks/:webhook_id", ({ principal, params }) => getWebhook(sql, principal.orgId, params.webhook_id), {
      permission: "view",
      params: webhookParams,
      response: { 200: WebhookSchema, ...errorResponses([400, 404]) },
      detail: { summary: "Get a webhook (extension)" },
    })
    .patch("/webhooks/:webhook_id", ({ principal, params, body }) => updateWebhook(deps, principal.orgId, params.webhook_id, body), {
      permission: "edit",
      params: webhookParams,
      body: WebhookChange,
      response: { 200: WebhookSchema, ...errorResponses([400, 404]) },
      detail: { summary: "Change a webhook (extension)", description: "A disabled webhook gets no new deliveries; its pending ones fail as they come up." },
    })
    .delete(
      "/webhooks/:webhook_id",
      async ({ principal, params, set }) => {
        await deleteWebhook(sql, principal.orgId, params.webhook_id);
        set.status = 204;
      },
      {
        permission: "delete",
        params: webhookParams,
        response: { 204: t.Void(), ...errorResponses([400, 404]) },
        detail: { summary: "Delete a webhook and its deliveries (extension)" },
      },
    )
    .post("/webhooks/:webhook_id/rotate-secret", ({ principal, params }) => rotateSecret(deps, principal.orgId, params.webhook_id), {
      permission: "edit",
      params: webhookParams,
      response: { 200: t.Object({ secret: t.String(), webhook: WebhookSchema }), ...errorResponses([400, 404]) },
      detail: { summary: "Replace a webhook's signing secret (extension)", description: "The new secret is shown once; every delivery from now on, retries included, is signed with it." },
    })
    .post(
      "/webhooks/:webhook_id/test",
      async ({ principal, params, set }) => {
        const webhook = await getWebhook(sql, principal.orgId, params.webhook_id);
        const [id] = await sql.transaction((tx) => emitEvent(deps, tx, principal.orgId, TEST_EVENT, { webhook_id: webhook.id, message: "a test delivery from Mediabox" }, [webhook.id]));
        set.status = 202;
        if (!id) return { delivery_id: null, message: "the webhook is disabled; nothing was sent" };
        return { delivery_id: id, message: "a webhook.test event is on its way" };
      },
      {
        permission: "edit",
        params: webhookParams,
        response: { 202: t.Object({ delivery_id: Nullable(t.String()), message: t.String() }), ...errorResponses([400, 404]) },
        detail: { summary: "Send a webhook.test event (extension)" },
      },
    )
    .get(
      "/webhook-deliveries",
      async ({ principal, query }) => {
        const { items, total } = await listDeliveries(sql, principal.orgId, { webhookId: query.webhook_id, status: query.status }, query.limit, query.offset);
        return page(items, total, query.limit, query.offset);
      },
      {
        permission: "view",
        query: t.Object({ webhook_id: t.Optional(Uuid("webhook_id")), status: t.Optional(DeliveryStatus), ...pageQuery(100, 50) }),
        response: { 200: Page(DeliverySchema), ...errorResponses([400, 404]) },
        detail: { summary: "Webhook deliveries, newest first (extension)", description: "status=failed is the dead-letter list." },
      },
    )
    .get("/webhook-deliveries/:delivery_id", ({ principal, params }) => getDelivery(sql, principal.orgId, params.delivery_id), {
      permission: "view",
      params: deliveryParams,
      response: { 200: DeliverySchema, ...errorResponses([400, 404]) },
      detail: { summary: "One delivery with its attempts (extension)" },
    })
    .post("/webhook-deliveries/:delivery_id/retry", ({ principal, params }) => retryDelivery(deps, principal.orgId, params.delivery_id), {
      permission: "edit",
      params: deliveryParams,
      response: { 200: DeliverySchema, ...errorResponses([400, 404, 409]) },
      detail: { summary: "Send a failed delivery again (extension)", description: "A fresh set of attempts, the same body signed anew." },
    });
}
