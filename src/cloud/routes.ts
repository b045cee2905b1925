/** HTTP binding of cloud storage: OAuth start and callbacks, connections, browse, picker, import, export and jobs. */
import { Elysia, t } from "elysia";
import type { CloudDeps } from "./deps.ts";
import { ApiError } from "../errors.ts";
import { permissions } from "../http/permissions.ts";
import { publicOrigin, requestInfo } from "../http/request-context.ts";
import { Enum, MAX_OFFSET, Nullable, NullableTimestamp, queryInt, Timestamp, Uuid, UuidText, errorResponses } from "../http/shapes.ts";
import { callbackPage } from "./callback-page.ts";
import { cancelCloudJob, CLOUD_JOB_STATUSES, cloudJobView, createExport, createImport } from "./cloud-jobs.ts";
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

const ProviderParams = t.Object({ provider: t.String({ description: `One of ${PROVIDER_NAMES.join(", ")}` }) });
const ConnectionParams = t.Object({ connection_id: Uuid("connection_id") });
const JobParams = t.Object({ job_id: Uuid("job_id") });
const CloudErrors = errorResponses([400, 404, 409, 502, 503]);

export function cloudRoutes(ctx: CloudDeps) {
  const { cloud } = ctx;
  return new Elysia({ tags: ["Cloud storage"] })
    .get(
      "/cloud-storage/auth/:provider/callback",
      async ({ params, query, request }) => {
        // The popup lands here without an API key; the state (single-use) names the organization.
        const info = requestInfo(request);
        try {
          const result = await cloud.completeAuthorization(params.provider, query, null);
          return callbackPage({ type: "oauth-complete", success: true, connection: cloud.popupView(result.connection) }, result.openerOrigin, 200);
        } catch (err) {
          if (!(err instanceof ApiError)) ctx.log.error("cloud OAuth callback failed", { err, ip: info.ip });
          const apiError = err instanceof ApiError ? err : new ApiError("INTERNAL_ERROR", "the connection could not be completed");
          const origin = cloud.openerOrigin(`${publicOrigin(ctx.config, request)}/`);
          return callbackPage({ type: "oauth-complete", success: false, error: apiError.detail, code: apiError.code }, origin, apiError.status);
        }
      },
      {
        params: ProviderParams,
        query: t.Object({
          code: t.Optional(t.String({ maxLength: 4096 })),
          state: t.Optional(t.String({ maxLength: 512 })),
          error: t.Optional(t.String({ maxLength: 200 })),
          error_description: t.Optional(t.String({ maxLength: 2000 })),
        }),
        response: {
          200: t.String({ description: "HTML page posting {type: oauth-complete, success: true, connection} to window.opener" }),
          400: t.String({ description: "HTML page posting {type: oauth-complete, success: false, error, code}" }),
          404: t.String({ description: "HTML page (unknown or unconfigured provider)" }),
          ...errorResponses([429], { public: true }),
        },
        detail: {
          security: [],
          summary: "OAuth redirect target: an HTML page that posts oauth-complete to window.opener",
          description: "Not JSON. Needs no API key: the single-use state issued by POST /cloud-storage/auth/{provider} names the flow.",
        },
      },
    )
    .use(permissions)
    .post("/cloud-storage/auth/:provider", ({ principal, params, request }) => cloud.startAuthorization({ orgId: principal.orgId, keyId: principal.keyId }, params.provider, publicOrigin(ctx.config, request)), {
      permission: "edit",
      params: ProviderParams,
      body: t.Optional(t.Object({}, { description: "No fields; an empty body or {}" })),
      response: { 200: t.Object({ authorization_url: t.String(), state: t.String(), provider: t.String() }), ...CloudErrors },
      detail: { summary: "Start connecting a cloud drive (OAuth 2.0 authorization code with PKCE)" },
    })
    .post(
      "/cloud-storage/auth/:provider/callback",
      async ({ principal, params, body }) => {
        const result = await cloud.completeAuthorization(params.provider, body, { orgId: principal.orgId, keyId: principal.keyId });
        return { connection: cloud.view(result.connection), is_new: result.is_new };
      },
      {
        permission: "edit",
        params: ProviderParams,
        body: t.Object({ code: t.String({ minLength: 1, maxLength: 4096 }), state: t.String({ minLength: 1, maxLength: 512 }) }),
        response: { 200: t.Object({ connection: Connection, is_new: t.Boolean() }), ...CloudErrors },
        detail: { summary: "Complete a connection with the code and state the provider returned (same API key that started it)" },
      },
    )
    .get("/cloud-storage/providers", () => ({ items: cloud.providerStates() }), {
      permission: "view",
      response: { 200: t.Object({ items: t.Array(t.Object({ name: t.String(), configured: t.Boolean() })) }), ...errorResponses([]) },
      detail: {
        summary: "The cloud providers and whether this appliance can connect each (extension)",
        description: "A provider is configured when its settings are set (Google Drive: MEDIABOX_GOOGLE_DRIVE_CLIENT_ID and _SECRET; Nextcloud: MEDIABOX_NEXTCLOUD_URL, _CLIENT_ID and _CLIENT_SECRET).",
      },
    })
    .get(
      "/cloud-storage/connections",
      ({ principal, query }) =>
        cloud.list(principal.orgId, { provider: query.provider, activeOnly: query.active_only !== "false" && query.active_only !== "0", limit: query.limit, offset: query.offset }),
      {
        permission: "view",
        query: t.Object({
          provider: t.Optional(t.String()),
          active_only: t.Optional(Enum(["true", "false", "1", "0"], { error: "active_only: must be true or false" })),
          limit: queryInt("limit", 1, 100, 20),
          offset: queryInt("offset", 0, MAX_OFFSET, 0),
        }),
        response: { 200: t.Object({ items: t.Array(Connection), total_count: t.Integer(), limit: t.Integer(), offset: t.Integer(), has_more: t.Boolean() }), ...CloudErrors },
        detail: { summary: "List the organization's cloud connections" },
      },
    )
    .get(
      "/cloud-storage/connections/:connection_id/browse",
      ({ principal, params, query }) =>
        cloud.browse(principal.orgId, params.connection_id, { folderId: query.folder_id ?? null, pageToken: query.page_token ?? null, pageSize: query.page_size }),
      {
        permission: "view",
        params: ConnectionParams,
        query: t.Object({
          folder_id: t.Optional(t.String({ maxLength: 4096 })),
          page_token: t.Optional(t.String({ maxLength: 4096 })),
          page_size: queryInt("page_size", 1, 200, 50),
        }),
        response: {
          200: t.Object({
            files: t.Array(CloudEntry),
            next_page_token: Nullable(t.String()),
            current_folder_id: t.String(),
            breadcrumbs: t.Array(t.Object({ id: t.String(), name: t.String() })),
            provider: t.String(),
          }),
          ...CloudErrors,
        },
        detail: { summary: "List a folder of the drive (root when folder_id is omitted)" },
      },
    )
    .delete("/cloud-storage/connections/:connection_id", ({ principal, params }) => cloud.remove(principal.orgId, params.connection_id), {
      permission: "delete",
      params: ConnectionParams,
      response: { 200: t.Object({ success: t.Boolean(), message: t.String() }), ...CloudErrors },
      detail: { summary: "Revoke the connection's grant at the provider and remove it" },
    })
    .get("/cloud-storage/connections/:connection_id/picker-token", ({ principal, params }) => cloud.pickerSession(principal.orgId, params.connection_id), {
      permission: "view",
      params: ConnectionParams,
      response: {
        200: t.Object({
          session: t.Object({ session_id: t.String(), access_token: t.String(), app_id: Nullable(t.String()), developer_key: Nullable(t.String()), expires_at: Timestamp }),
        }),
        ...CloudErrors,
      },
      detail: { summary: "A picker session for the provider's client-side picker (google_drive)" },
    })
    .post("/cloud-storage/picker-proxy", ({ principal, body }) => cloud.pickerProxy(principal.orgId, body), {
      permission: "view",
      body: t.Object({
        session_id: UuidText("The picker session"),
        endpoint: t.String({ minLength: 1, maxLength: 300 }),
        params: t.Optional(t.Record(t.String(), t.String({ maxLength: 4096 }), { error: "params: must be a map of strings" })),
      }),
      response: { 200: t.Object({ data: t.Unknown() }), ...CloudErrors },
      detail: { summary: "Call the provider for the picker: files, files/{id}, files/{id}/export and about only" },
    })
    .post("/cloud-storage/import", ({ principal, body }) => createImport(ctx, principal, body), {
      permission: "edit",
      body: t.Object({
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
      }),
      response: {
        200: t.Object({ image_ids: t.Array(t.String()), job_id: t.String(), status: t.String(), total_files: t.Integer(), is_async: t.Boolean(), message: t.String() }),
        ...CloudErrors,
      },
      detail: { summary: "Import files from a cloud drive: placeholders now, a durable job downloads them" },
    })
    .post("/cloud-storage/export", ({ principal, body }) => createExport(ctx, principal, body), {
      permission: "edit",
      body: t.Object({
        connection_id: UuidText("The connection to write to"),
        image_ids: t.Array(UuidText(), { minItems: 1, error: "image_ids: at least one file UUID" }),
        folder_id: t.Optional(Nullable(t.String({ minLength: 1, maxLength: 4096 }))),
        folder_name: t.Optional(Nullable(t.String({ minLength: 1, maxLength: 255 }))),
      }),
      response: {
        200: t.Object({ cloud_file_ids: t.Array(t.String()), job_id: t.String(), job_status: t.String(), is_async: t.Boolean(), message: t.String() }),
        ...CloudErrors,
      },
      detail: {
        summary: "Upload the originals of library files to a cloud folder (folder_id, or a new folder_name inside it)",
        description: `Up to 5 files are written before the response (is_async false, cloud_file_ids filled); more run as a job.`,
      },
    })
    .get("/cloud-storage/jobs/:job_id", ({ principal, params }) => ({ job: cloudJobView(ctx, principal.orgId, params.job_id) }), {
      permission: "view",
      params: JobParams,
      response: { 200: t.Object({ job: CloudJob }), ...CloudErrors },
      detail: { summary: "A cloud import or export job" },
    })
    .post("/cloud-storage/jobs/:job_id/cancel", async ({ principal, params }) => ({ job: await cancelCloudJob(ctx, principal.orgId, params.job_id) }), {
      permission: "edit",
      params: JobParams,
      response: { 200: t.Object({ job: CloudJob }), ...CloudErrors },
      detail: { summary: "Cancel a cloud job (extension); 409 once it has finished" },
    });
}


