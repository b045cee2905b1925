/** HTTP binding of cloud storage: OAuth start and callbacks, connections, browse, picker, import, export and jobs. */
import { Elysia } from "elysia";
import type { CloudDeps } from "./deps.ts";
import { ApiError } from "../errors.ts";
import { permissions } from "../http/permissions.ts";
import { publicOrigin, requestInfo } from "../http/request-context.ts";
import { errorResponses } from "../http/shapes.ts";
import { callbackPage } from "./callback-page.ts";
import { cancelCloudJob, cloudJobView, createExport, createImport } from "./cloud-jobs.ts";
import {
  AuthCode,
  CallbackPages,
  AuthStarted,
  BrowseQuery,
  CloudErrors,
  Connected,
  ConnectionList,
  ConnectionParams,
  ConnectionsQuery,
  ExportBody,
  ExportStarted,
  FolderListing,
  ImportBody,
  ImportStarted,
  JobAnswer,
  JobParams,
  NoBody,
  OAuthCallbackQuery,
  PickerProxyBody,
  PickerSession,
  ProviderParams,
  ProxyAnswer,
  Providers,
  Removed,
} from "./model.ts";

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
        query: OAuthCallbackQuery,
        response: {
          ...CallbackPages,
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
      body: NoBody,
      response: { 200: AuthStarted, ...CloudErrors },
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
        body: AuthCode,
        response: { 200: Connected, ...CloudErrors },
        detail: { summary: "Complete a connection with the code and state the provider returned (same API key that started it)" },
      },
    )
    .get("/cloud-storage/providers", () => ({ items: cloud.providerStates() }), {
      permission: "view",
      response: { 200: Providers, ...errorResponses([]) },
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
        query: ConnectionsQuery,
        response: { 200: ConnectionList, ...CloudErrors },
        detail: { summary: "List the organization's cloud connections" },
      },
    )
    .get(
      "/cloud-storage/connections/:connection_id/browse",
      async ({ principal, params, query }) => {
        const page = await cloud.browse(principal.orgId, params.connection_id, { folderId: query.folder_id ?? null, pageToken: query.page_token ?? null, pageSize: query.page_size });
        // What the ingest path takes, by declared type and name (detection still decides), besides what the provider converts.
        const files = page.files.map((f) => ({ ...f, is_importable: f.is_importable || (!f.is_folder && ctx.kinds.forecast(f.mime_type, f.name) !== null) }));
        return { ...page, files };
      },
      {
        permission: "view",
        params: ConnectionParams,
        query: BrowseQuery,
        response: {
          200: FolderListing,
          ...CloudErrors,
        },
        detail: { summary: "List a folder of the drive (root when folder_id is omitted)" },
      },
    )
    .delete("/cloud-storage/connections/:connection_id", ({ principal, params }) => cloud.remove(principal.orgId, params.connection_id), {
      permission: "delete",
      params: ConnectionParams,
      response: { 200: Removed, ...CloudErrors },
      detail: { summary: "Revoke the connection's grant at the provider and remove it" },
    })
    .get("/cloud-storage/connections/:connection_id/picker-token", ({ principal, params }) => cloud.pickerSession(principal.orgId, params.connection_id), {
      permission: "view",
      params: ConnectionParams,
      response: {
        200: PickerSession,
        ...CloudErrors,
      },
      detail: { summary: "A picker session for the provider's client-side picker (google_drive)" },
    })
    .post("/cloud-storage/picker-proxy", ({ principal, body }) => cloud.pickerProxy(principal.orgId, body), {
      permission: "view",
      body: PickerProxyBody,
      response: { 200: ProxyAnswer, ...CloudErrors },
      detail: { summary: "Call the provider for the picker: files, files/{id}, files/{id}/export and about only" },
    })
    .post("/cloud-storage/import", ({ principal, body }) => createImport(ctx, principal, body), {
      permission: "edit",
      body: ImportBody,
      response: {
        200: ImportStarted,
        ...CloudErrors,
      },
      detail: { summary: "Import files from a cloud drive: placeholders now, a durable job downloads them" },
    })
    .post("/cloud-storage/export", ({ principal, body }) => createExport(ctx, principal, body), {
      permission: "edit",
      body: ExportBody,
      response: {
        200: ExportStarted,
        ...CloudErrors,
      },
      detail: {
        summary: "Upload the originals of library files to a cloud folder (folder_id, or a new folder_name inside it)",
        description: `Up to 5 files are written before the response (is_async false, cloud_file_ids filled); more run as a job.`,
      },
    })
    .get("/cloud-storage/jobs/:job_id", async ({ principal, params }) => ({ job: await cloudJobView(ctx, principal.orgId, params.job_id) }), {
      permission: "view",
      params: JobParams,
      response: { 200: JobAnswer, ...CloudErrors },
      detail: { summary: "A cloud import or export job" },
    })
    .post("/cloud-storage/jobs/:job_id/cancel", async ({ principal, params }) => ({ job: await cancelCloudJob(ctx, principal.orgId, params.job_id) }), {
      permission: "edit",
      params: JobParams,
      response: { 200: JobAnswer, ...CloudErrors },
      detail: { summary: "Cancel a cloud job (extension); 409 once it has finished" },
    });
}


