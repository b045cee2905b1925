/** The cloud storage routes' request and response schemas (TypeBox). */
import { t } from "elysia";
import { Enum, MAX_OFFSET, Nullable, NullableTimestamp, queryInt, Timestamp, Uuid, UuidText, errorResponses } from "../http/shapes.ts";
import { CLOUD_JOB_STATUSES } from "./cloud-jobs.ts";
import { PROVIDER_NAMES } from "./provider.ts";

const Connection = t.Object(
  {
    id: t.String({ format: "uuid" }),
    provider: t.String(),
    provider_email: Nullable(t.String()),
    provider_display_name: Nullable(t.String()),
    is_active: t.Boolean(),
    is_token_expired: t.Boolean(),
    connected_at: Timestamp,
    last_used_at: NullableTimestamp,
  },
  { title: "CloudConnection" },
);

const CloudEntry = t.Object({
  id: t.String(),
  name: t.String(),
  mime_type: t.String(),
  size_bytes: Nullable(t.Integer()),
  modified_at: Nullable(t.String()),
  is_folder: t.Boolean(),
  web_view_link: Nullable(t.String()),
  thumbnail_url: Nullable(t.String()),
  is_importable: t.Boolean(),
});

const CloudJob = t.Object(
  {
    job_id: t.String({ format: "uuid" }),
    type: Enum(["import", "export"] as const),
    status: Enum(CLOUD_JOB_STATUSES),
    connection_id: t.String(),
    provider: t.String(),
    total_files: t.Integer(),
    completed_files: t.Integer(),
    failed_files: t.Integer(),
    skipped_files: t.Integer({ description: "Extension: cancelled before transfer, or duplicates with skip_duplicates" }),
    progress_percentage: t.Number({ description: "Extension" }),
    error: Nullable(t.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    completed_at: NullableTimestamp,
    cloud_file_ids: t.Array(Nullable(t.String()), { description: "Extension: exports, the cloud id written per file (null until written or when it failed)" }),
    files: t.Array(
      t.Object({
        index: t.Integer(),
        name: t.String(),
        cloud_file_id: Nullable(t.String()),
        image_id: t.String(),
        status: Enum(["pending", "completed", "failed", "skipped"] as const),
        error: Nullable(t.String()),
        attempts: t.Integer(),
      }),
      { description: "Extension: per-file progress" },
    ),
  },
  { title: "CloudJob" },
);

export const ProviderParams = t.Object({ provider: t.String({ description: `One of ${PROVIDER_NAMES.join(", ")}` }) });
export const ConnectionParams = t.Object({ connection_id: Uuid("connection_id") });
export const JobParams = t.Object({ job_id: Uuid("job_id") });
export const CloudErrors = errorResponses([400, 404, 409, 502, 503]);

export const OAuthCallbackQuery = t.Object({
  code: t.Optional(t.String({ maxLength: 4096 })),
  state: t.Optional(t.String({ maxLength: 512 })),
  error: t.Optional(t.String({ maxLength: 200 })),
  error_description: t.Optional(t.String({ maxLength: 2000 })),
});
export const AuthStarted = t.Object({ authorization_url: t.String(), state: t.String(), provider: t.String() });
export const AuthCode = t.Object({ code: t.String({ minLength: 1, maxLength: 4096 }), state: t.String({ minLength: 1, maxLength: 512 }) });
export const Connected = t.Object({ connection: Connection, is_new: t.Boolean() });
export const Providers = t.Object({ items: t.Array(t.Object({ name: t.String(), configured: t.Boolean() })) });
export const ConnectionsQuery = t.Object({
  provider: t.Optional(t.String()),
  active_only: t.Optional(Enum(["true", "false", "1", "0"], { error: "active_only: must be true or false" })),
  limit: queryInt("limit", 1, 100, 20),
  offset: queryInt("offset", 0, MAX_OFFSET, 0),
});
export const ConnectionList = t.Object({ items: t.Array(Connection), total_count: t.Integer(), limit: t.Integer(), offset: t.Integer(), has_more: t.Boolean() });
export const BrowseQuery = t.Object({
  folder_id: t.Optional(t.String({ maxLength: 4096 })),
  page_token: t.Optional(t.String({ maxLength: 4096 })),
  page_size: queryInt("page_size", 1, 200, 50),
});
export const FolderListing = t.Object({
  files: t.Array(CloudEntry),
  next_page_token: Nullable(t.String()),
  current_folder_id: t.String(),
  breadcrumbs: t.Array(t.Object({ id: t.String(), name: t.String() })),
  provider: t.String(),
});
export const Removed = t.Object({ success: t.Boolean(), message: t.String() });
export const PickerSession = t.Object({
  session: t.Object({ session_id: t.String(), access_token: t.String(), app_id: Nullable(t.String()), developer_key: Nullable(t.String()), expires_at: Timestamp }),
});
export const PickerProxyBody = t.Object({
  session_id: UuidText("The picker session"),
  endpoint: t.String({ minLength: 1, maxLength: 300 }),
  params: t.Optional(t.Record(t.String(), t.String({ maxLength: 4096 }), { error: "params: must be a map of strings" })),
});
export const ImportBody = t.Object({
  connection_id: UuidText("The connection to read from"),
  files: t.Array(
    t.Object({
      id: t.String({ minLength: 1, maxLength: 4096 }),
      name: t.String({ minLength: 1, maxLength: 255, error: "files.name: 1-255 characters" }),
      mime_type: t.Optional(Nullable(t.String({ maxLength: 255 }))),
      size_bytes: t.Optional(Nullable(t.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }))),
    }),
    { minItems: 1, error: "files: at least one {id, name, mime_type?, size_bytes?}" },
  ),
  auto_describe: t.Optional(t.Boolean({ description: "Deprecated; accepted and ignored (descriptions are always generated)" })),
  tags: t.Optional(t.Array(t.String())),
  folder_id: t.Optional(Nullable(UuidText("Library folder to import into"))),
  provider_metadata: t.Optional(Nullable(t.Record(t.String(), t.Unknown()))),
  skip_duplicates: t.Optional(t.Boolean({ description: "Extension: a file whose content the organization already has is skipped (its placeholder is deleted)" })),
});
export const ImportStarted = t.Object({ image_ids: t.Array(t.String()), job_id: t.String(), status: t.String(), total_files: t.Integer(), is_async: t.Boolean(), message: t.String() });
export const ExportBody = t.Object({
  connection_id: UuidText("The connection to write to"),
  image_ids: t.Array(UuidText(), { minItems: 1, error: "image_ids: at least one file UUID" }),
  folder_id: t.Optional(Nullable(t.String({ minLength: 1, maxLength: 4096 }))),
  folder_name: t.Optional(Nullable(t.String({ minLength: 1, maxLength: 255 }))),
});
export const ExportStarted = t.Object({ cloud_file_ids: t.Array(t.String()), job_id: t.String(), job_status: t.String(), is_async: t.Boolean(), message: t.String() });
export const JobAnswer = t.Object({ job: CloudJob });
export const NoBody = t.Optional(t.Object({}, { description: "No fields; an empty body or {}" }));
export const ProxyAnswer = t.Object({ data: t.Unknown() });
/** The OAuth redirect's answers: HTML pages, not JSON. */
export const CallbackPages = {
  200: t.String({ description: "HTML page posting {type: oauth-complete, success: true, connection} to window.opener" }),
  400: t.String({ description: "HTML page posting {type: oauth-complete, success: false, error, code}" }),
  404: t.String({ description: "HTML page (unknown or unconfigured provider)" }),
};
