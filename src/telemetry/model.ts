/** POST /files/log-upload-event's request and response schemas (TypeBox). */
import { t } from "elysia";

/** Seconds or milliseconds since 1970 (either fits well inside): the client's clock, stored as sent. */
const MAX_CLIENT_TIMESTAMP = 1e14;

export const UploadEventBody = t.Object({
  event_type: t.String({ minLength: 1, maxLength: 100, error: "event_type must be a string of 1-100 characters" }),
  message: t.String({ maxLength: 2000, error: "message must be a string of at most 2000 characters" }),
  data: t.Optional(t.Record(t.String(), t.Unknown(), { error: "data must be a JSON object" })),
  timestamp: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Number({ minimum: -MAX_CLIENT_TIMESTAMP, maximum: MAX_CLIENT_TIMESTAMP })], { error: "timestamp must be an ISO 8601 string or a number" })),
  batch_id: t.Optional(t.String({ maxLength: 100, error: "batch_id must be at most 100 characters" })),
  file_index: t.Optional(t.Integer({ minimum: 0, maximum: 10_000, error: "file_index must be an integer from 0 to 10000" })),
  file_name: t.Optional(t.String({ maxLength: 500, error: "file_name must be at most 500 characters" })),
});

export const UploadEventLogged = t.Object({ status: t.Literal("logged"), timestamp: t.String({ format: "date-time" }) });
