/** POST /support/contact's request and response schemas (TypeBox). */
import { t } from "elysia";
import { Timestamp } from "../http/shapes.ts";

export const SupportMessageBody = t.Object({
  email: t.String({ minLength: 3, maxLength: 320, pattern: "^[^\\s@]+@[^\\s@]+$", error: "email must be an email address" }),
  name: t.Optional(t.String({ maxLength: 200, error: "name must be at most 200 characters" })),
  subject: t.String({ minLength: 1, maxLength: 200, error: "subject must be a string of 1-200 characters" }),
  message: t.String({ minLength: 1, maxLength: 10_000, error: "message must be a string of 1-10000 characters" }),
});

export const SupportMessageReceived = t.Object({ id: t.String(), received_at: Timestamp });
