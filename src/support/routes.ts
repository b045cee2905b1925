/** HTTP binding of POST /support/contact (anonymous or signed in; 3 requests/minute per IP). */
import { Elysia } from "elysia";
import type { SupportDeps } from "./deps.ts";
import { requestInfo } from "../http/request-context.ts";
import { errorResponses } from "../http/shapes.ts";
import { SupportMessageBody, SupportMessageReceived } from "./model.ts";
import { sendSupportCopy, storeSupportMessage } from "./support.ts";

export function supportRoutes(ctx: SupportDeps) {
  const { sql, clock, config, accounts } = ctx;
  return new Elysia({ tags: ["Support"] }).post(
    "/support/contact",
    async ({ body, request, set }) => {
      const { ip, principal } = requestInfo(request);
      const message = await storeSupportMessage(sql, clock, {
        ...body,
        userId: principal?.session?.userId ?? null,
        orgId: principal?.orgId ?? null,
        ip,
      });
      // The sender does not wait for SMTP; a failed copy is logged and the message stays stored.
      sendSupportCopy(sql, clock, accounts.mailer, config.supportEmail, message);
      set.status = 202;
      return { id: message.id, received_at: message.created_at };
    },
    {
      body: SupportMessageBody,
      response: { 202: SupportMessageReceived, ...errorResponses([400, 429], { public: true }) },
      detail: {
        summary: "Send a message to support",
        description: "No authentication needed (a session or key attaches the user and organization). Stored; mailed to MEDIABOX_SUPPORT_EMAIL when SMTP is configured. 3 requests/minute per IP.",
      },
    },
  );
}
