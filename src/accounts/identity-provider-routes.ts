/**
 * HTTP binding of sign-in through the site's OpenID Connect provider: starting a sign-in or a link,
 * the provider's callback, unlinking. The protocol is in oidc.ts.
 */
import { Elysia, t } from "elysia";
import { ApiError } from "../errors.ts";
import { API_PREFIX } from "../http/api-prefix.ts";
import { publicOrigin } from "../http/request-context.ts";
import { errorResponses } from "../http/shapes.ts";
import { accountGate, sessionOf } from "./account-gate.ts";
import { OIDC_COOKIE, oidcCookie, readCookie, sessionCookies } from "./cookies.ts";
import { FLOW_LIFETIME_MS, findIdentity, linkIdentity, unlinkIdentity } from "./oidc.ts";
import { client, sessionAnswers, type AccountRouteDeps } from "./session-answers.ts";
import { getUser } from "./users.ts";
import { CallbackQuery, FlowBody, IdentityProviderRedirect, LinkBody, SESSION_ERRORS, UnlinkBody, Unlinked } from "./model.ts";

const CALLBACK_PATH = "/auth/session/oidc/callback";

export function identityProviderRoutes(ctx: AccountRouteDeps) {
  const { sql: db, clock, config, accounts } = ctx;
  const { maxAge, endPrevious } = sessionAnswers(ctx);

  /** Starts a sign-in or link at the identity provider; the browser gets the flow cookie, the caller the URL to open. */
  async function startFlow(request: Request, set: { headers: Record<string, unknown> }, purpose: "login" | "link", userId: string | null, returnTo: string | undefined) {
    accounts.oidc.requireConfigured();
    const origin = publicOrigin(config, request);
    const started = await accounts.oidc.start(db, clock, { purpose, userId, redirectUri: `${origin}${API_PREFIX}${CALLBACK_PATH}`, returnTo: returnTo ?? "/" });
    set.headers["set-cookie"] = oidcCookie(config, started.browserBinding, FLOW_LIFETIME_MS / 1000, `${API_PREFIX}${CALLBACK_PATH}`);
    set.headers["cache-control"] = "no-store";
    return { authorization_url: started.authorizationUrl, provider: accounts.oidc.name };
  }

  return new Elysia({ tags: ["Accounts"] })
    .use(accountGate)
    .post("/auth/session/oidc/start", ({ request, set, body }) => startFlow(request, set, "login", null, body.return_to), {
      body: FlowBody,
      response: { 200: IdentityProviderRedirect, ...errorResponses([404, 429], { public: true }) },
      detail: {
        summary: "Start sign-in at the site's identity provider (OpenID Connect)",
        description:
          "Returns the provider's authorization URL for the browser to open and sets a short-lived HttpOnly flow cookie; the provider sends the browser back to " +
          `${API_PREFIX}${CALLBACK_PATH}. 404 OIDC_NOT_CONFIGURED without MEDIABOX_OIDC_DISCOVERY_URL. 10 requests/minute per IP.`,
      },
    })
    .post("/auth/session/google", ({ request, set, body }) => startFlow(request, set, "login", null, body.return_to), {
      body: FlowBody,
      response: { 200: IdentityProviderRedirect, ...errorResponses([404, 429], { public: true }) },
      detail: {
        summary: "Social sign-in (the spec's path): the same as /auth/session/oidc/start",
        description:
          "An appliance signs in through its site's OpenID Connect provider, whichever it is (Google Workspace included, by its discovery URL); " +
          "without one configured this answers 404 OIDC_NOT_CONFIGURED. 10 requests/minute per IP.",
      },
    })
    .get(
      CALLBACK_PATH,
      async ({ request, set }) => {
        // A browser navigation: the answer is a redirect to the dashboard, with the outcome in the query.
        set.headers["cache-control"] = "no-store";
        const cookies: string[] = [oidcCookie(config, "", 0, `${API_PREFIX}${CALLBACK_PATH}`)];
        let target = "/";
        try {
          const result = await accounts.oidc.finish(db, clock, callbackUrl(publicOrigin(config, request), request), readCookie(request, OIDC_COOKIE));
          target = result.returnTo;
          if (result.purpose === "link") {
            const user = result.userId ? await getUser(db, result.userId) : null;
            if (!user) throw new ApiError("UNAUTHENTICATED", "the user who started the link is gone");
            await linkIdentity(db, clock, { provider: accounts.oidc.name, issuer: result.issuer, subject: result.subject, userId: user.id, email: result.email });
            target = withQuery(target, { linked: accounts.oidc.name });
          } else {
            const linked = await findIdentity(db, result.issuer, result.subject);
            const user = linked ? await getUser(db, linked.user_id) : null;
            if (!user || user.disabled_at) {
              throw new ApiError("IDENTITY_NOT_LINKED", "no user has linked this identity; sign in with your password and link it, or accept an invitation first");
            }
            const signed = await accounts.startSession(user, client(request));
            await endPrevious(request);
            cookies.push(...sessionCookies(config, signed.issued.sessionId, signed.issued.csrfToken, maxAge(signed.issued)));
          }
        } catch (err) {
          const code = err instanceof ApiError ? err.code : "INTERNAL_ERROR";
          if (!(err instanceof ApiError)) ctx.log.error("identity provider callback failed", { err });
          target = withQuery(target, { sign_in_error: code });
        }
        set.headers["set-cookie"] = cookies;
        set.status = 303;
        set.headers.location = `${publicOrigin(config, request)}${target}`;
        return undefined;
      },
      {
        query: CallbackQuery,
        response: { 303: t.Void({ description: "Redirect to return_to (with ?sign_in_error=CODE or ?linked=<provider>)" }), ...errorResponses([429], { public: true }) },
        detail: {
          summary: "Where the identity provider sends the browser back",
          description:
            "Checks state (single use, 10 minutes, bound to the browser's flow cookie), PKCE and the ID token's nonce, then signs in (login) or links the identity (link-provider), " +
            "and redirects (303) to `return_to` with `?sign_in_error=CODE` or `?linked=<provider>`. 10 requests/minute per IP.",
        },
      },
    )
    .post(
      "/auth/session/link-provider",
      ({ request, set, body }) => {
        const session = sessionOf(request);
        accounts.oidc.requireConfigured(body.provider);
        return startFlow(request, set, "link", session.userId, body.return_to);
      },
      {
        account: "member",
        body: LinkBody,
        response: { 200: IdentityProviderRedirect, ...SESSION_ERRORS, ...errorResponses([404], { public: true }) },
        detail: {
          summary: "Link the site's identity provider to the signed-in user",
          description: "Returns the authorization URL; after the provider, the callback links the identity (409 IDENTITY_ALREADY_LINKED if another user has it). Needs X-CSRF-Token. 5 requests/minute per IP.",
        },
      },
    )
    .post(
      "/auth/session/unlink-provider",
      async ({ request, body }) => {
        const session = sessionOf(request);
        const user = (await getUser(db, session.userId))!;
        const unlinked = await unlinkIdentity(db, user.id, body.provider, user.password_hash !== null);
        return { provider: body.provider, unlinked };
      },
      {
        account: "member",
        body: UnlinkBody,
        response: { 200: Unlinked, ...SESSION_ERRORS, ...errorResponses([409], { public: true }) },
        detail: {
          summary: "Unlink an identity provider from the signed-in user",
          description: "409 LAST_SIGN_IN_METHOD when the user has no password and no other identity. Needs X-CSRF-Token. 3 requests/minute per IP.",
        },
      },
    );
}

/**
 * The URL the provider redirected to, as the provider saw it: behind a proxy the request's own
 * origin is the internal one, and openid-client derives the redirect_uri it sends from this URL.
 */
function callbackUrl(origin: string, request: Request): URL {
  const url = new URL(request.url);
  return new URL(`${origin}${url.pathname}${url.search}`);
}

function withQuery(path: string, params: Record<string, string>): string {
  const url = new URL(path, "http://x");
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.pathname + url.search;
}
