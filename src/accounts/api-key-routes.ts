/** HTTP binding of `/account/api-keys`: the organization's API keys, made and revoked from a dashboard session (the dashboard's "API Keys" tab). */
import { Elysia } from "elysia";
import { insertApiKey, listApiKeysOf, revokeApiKeyOf, type ApiKeyInfo } from "../auth/api-keys.ts";
import { PERMISSIONS } from "../auth/permissions.ts";
import { ApiError } from "../errors.ts";
import { errorResponses } from "../http/shapes.ts";
import { TIER_LIMITS } from "../tenancy/tiers.ts";
import { accountGate, requireManager, sessionOf } from "./account-gate.ts";
import type { AccountRouteDeps } from "./session-answers.ts";
import { ApiKeyList, ApiKeyParams, ApiKeySchema, ApiKeyWithSecret, NewApiKey, SESSION_ERRORS } from "./model.ts";

function keyView(info: ApiKeyInfo) {
  const { org_id: _org, ...rest } = info;
  return rest;
}

export function apiKeyRoutes(ctx: AccountRouteDeps) {
  const { sql: db, clock } = ctx;
  return new Elysia({ tags: ["Accounts"] })
    .use(accountGate)
    .get(
      "/account/api-keys",
      async ({ request }) => {
        const session = sessionOf(request);
        requireManager(session);
        return { items: (await listApiKeysOf(db, session.orgId)).map(keyView) };
      },
      { response: { 200: ApiKeyList, ...SESSION_ERRORS }, detail: { summary: "The organization's API keys (never the keys themselves)" } },
    )
    .post(
      "/account/api-keys",
      async ({ request, body, set }) => {
        const session = sessionOf(request);
        requireManager(session);
        if (!TIER_LIMITS[session.tier].apiKeys) {
          throw new ApiError("API_KEYS_NOT_IN_TIER", "the FREE tier has no API key access (use the dashboard, or move to STARTER or higher)");
        }
        const { key, info } = await insertApiKey(db, clock, session.orgId, { name: body.name ?? null, ...(body.permissions ? { permissions: PERMISSIONS.filter((p) => body.permissions!.includes(p)) } : {}) });
        set.status = 201;
        set.headers["cache-control"] = "no-store";
        return { ...keyView(info), key };
      },
      {
        account: "manager",
        body: NewApiKey,
        response: { 201: ApiKeyWithSecret, ...SESSION_ERRORS, ...errorResponses([400], { public: true }) },
        detail: {
          summary: "Create an API key (the dashboard's API Keys tab)",
          description: "Owners and admins. 403 API_KEYS_NOT_IN_TIER for a FREE organization. The key is in this answer only. Needs X-CSRF-Token.",
        },
      },
    )
    .delete(
      "/account/api-keys/:key_id",
      async ({ request, params }) => {
        const session = sessionOf(request);
        requireManager(session);
        const info = await revokeApiKeyOf(db, clock, session.orgId, params.key_id);
        if (!info) throw new ApiError("API_KEY_NOT_FOUND", `no API key ${params.key_id} in this organization`);
        return keyView(info);
      },
      {
        account: "manager",
        params: ApiKeyParams,
        response: { 200: ApiKeySchema, ...SESSION_ERRORS, ...errorResponses([404], { public: true }) },
        detail: { summary: "Revoke an API key", description: "Takes effect on the key's next request. Needs X-CSRF-Token." },
      },
    );
}
