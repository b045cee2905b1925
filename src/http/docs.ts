/**
 * The OpenAPI 3.1 document (`/api/v2/openapi.json`), generated from the routes' schemas, and
 * the interactive docs page (`/docs`, Swagger UI served from the binary so it works offline).
 */
import { toOpenAPISchema } from "@elysiajs/openapi";
import { Elysia, type AnyElysia } from "elysia";
import swaggerBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { ApiError } from "../errors.ts";
import { API_PREFIX } from "./api-prefix.ts";
import { NOSNIFF } from "./security-headers.ts";

export const VERSION = "0.1.0";
export const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;

const ASSETS: Record<string, { path: string; type: string }> = {
  "swagger-ui-bundle.js": { path: swaggerBundle, type: "text/javascript; charset=utf-8" },
  "swagger-ui.css": { path: swaggerCss, type: "text/css; charset=utf-8" },
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>Mediabox API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css" />
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/start.js"></script>
</body>
</html>`;

/** Starts Swagger UI; a file rather than an inline script, so the page's CSP allows no inline script. */
const START_SCRIPT = `SwaggerUIBundle({ url: "${OPENAPI_PATH}", dom_id: "#swagger-ui", persistAuthorization: true });\n`;

/** Swagger UI sets inline styles and draws its icons from data: URLs; scripts only from here. */
const DOCS_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const PAGE_HEADERS = { "content-security-policy": DOCS_CSP, "referrer-policy": "same-origin", ...NOSNIFF };

type Operation = { responses?: Record<string, { content?: Record<string, unknown> }> };

/**
 * The generator writes `content: {type: "undefined"}` for bodiless responses (204), which is not
 * valid OpenAPI; a response without a body simply has no content.
 */
function dropVoidContent(paths: Record<string, Record<string, Operation>>): void {
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      for (const response of Object.values(operation.responses ?? {})) {
        if (response.content && !Object.keys(response.content).some((k) => k.includes("/"))) delete response.content;
      }
    }
  }
}

/** OpenAPI has no WebSocket method: describe the upgrade as the GET it is. */
function describeWebSockets(paths: Record<string, Record<string, Operation>>): void {
  for (const item of Object.values(paths)) {
    const ws = item.ws as (Operation & { summary?: string }) | undefined;
    if (!ws) continue;
    delete item.ws;
    item.get = {
      ...ws,
      description:
        "WebSocket upgrade. Authenticate with the Authorization header or ?access_token=<API key>. Send " +
        '`{"action":"subscribe","channel":"batch.<session_id>"}`; messages are JSON objects with `type` ' +
        "subscribed, progress, file_completed, file_failed, session_completed or error (see the README).",
      responses: { 101: { description: "Switching Protocols" }, 401: { description: "Missing or invalid API key" } },
    } as Operation;
  }
}

export function openApiDocument(app: AnyElysia) {
  const { paths, components } = toOpenAPISchema(app, { staticFile: false });
  dropVoidContent(paths as unknown as Record<string, Record<string, Operation>>);
  describeWebSockets(paths as unknown as Record<string, Record<string, Operation>>);
  return {
    openapi: "3.1.2",
    info: {
      title: "Mediabox API",
      version: VERSION,
      description:
        "Self-hosted media analysis appliance. Every API path is under /api/v2; authenticate with " +
        "`Authorization: Bearer <API key>`. Errors are `{detail, code}`.",
    },
    paths,
    components: {
      ...components,
      securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "Mediabox API key (mbx_…)" } },
    },
    security: [{ apiKey: [] }],
  };
}

/** `root` is the whole application, whose routes the document describes (built on first request). */
export function docsRoutes(root: () => AnyElysia) {
  let document: ReturnType<typeof openApiDocument> | null = null;
  return new Elysia()
    .get(OPENAPI_PATH, () => (document ??= openApiDocument(root())), { detail: { hide: true } })
    .get("/docs", () => new Response(PAGE, { headers: { ...PAGE_HEADERS, "content-type": "text/html; charset=utf-8" } }), {
      detail: { hide: true },
    })
    .get(
      "/docs/assets/:file",
      ({ params }) => {
        const headers = { ...PAGE_HEADERS, "cache-control": "public, max-age=86400" };
        if (params.file === "start.js") return new Response(START_SCRIPT, { headers: { ...headers, "content-type": "text/javascript; charset=utf-8" } });
        const asset = ASSETS[params.file];
        if (!asset) throw new ApiError("NOT_FOUND", `no docs asset named ${params.file}`);
        return new Response(Bun.file(asset.path), { headers: { ...headers, "content-type": asset.type } });
      },
      { detail: { hide: true } },
    );
}
