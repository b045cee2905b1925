/** HTTP binding of POST /support/contact (anonymous or signed in; 3 requests/minute per IP). */
import { Elysia, t } from "elysia";
import type { SupportDeps } from "./deps.ts";
import { requestInfo } from "../http/request-context.ts";
import { Timestamp, errorResponses } from "../http/shapes.ts";
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
      body: t.Object({
        email: t.String({ minLength: 3, maxLength: 320, pattern: "^[^\\s@]+@[^\\s@]+$", error: "email must be an email address" }),
        name: t.Optional(t.String({ maxLength: 200, error: "name must be at most 200 characters" })),
        subject: t.String({ minLength: 1, maxLength: 200, error: "subject must be a string of 1-200 characters" }),
        message: t.String({ minLength: 1, maxLength: 10_000, error: "message must be a string of 1-10000 characters" }),
      }),
      response: { 202: t.Object({ id: t.String(), received_at: Timestamp }), ...errorResponses([400, 429], { public: true }) },
      detail: {
        summary: "Send a message to support",
        description: "No authentication needed (a session or key attaches the user and organization). Stored; mailed to MEDIABOX_SUPPORT_EMAIL when SMTP is configured. 3 requests/minute per IP.",
      },
    },
  );
}
