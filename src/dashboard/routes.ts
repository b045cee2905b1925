/**
 * The web dashboard's HTTP side: the page at `/` and its bundled assets under /app/assets/,
 * served by the binary itself (works air-gapped). The page is static; everything it shows comes
 * from the same /api/v2 routes a client uses, with the same permissions.
 */
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { dashboardFiles, type DashboardFile } from "./bundle.ts";
import { DASHBOARD_ASSETS_PATH, DASHBOARD_PAGES } from "./pages.ts";



/**
 * Script and styles from this origin only; images and video from anywhere the blob store signs
 * URLs for (the local store is this origin; an S3 bucket is another); no framing. The page sends
 * large files straight to the store, so `connect-src` names the origin of the store's signed URLs
 * too: without it the browser blocks every part of a bucket upload before it leaves.
 */
function pageSecurityPolicy(storeOrigin: string | null): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob: http: https:",
    "media-src 'self' blob: http: https:",
    `connect-src 'self' ws: wss:${storeOrigin ? ` ${storeOrigin}` : ""}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join("; ");
}

/** The tab's icon, inline: without one every page view asks for /favicon.ico and gets a 404. */
const ICON = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0b57d0"/><path d="M8 23V9l8 9 8-9v14" fill="none" stroke="#fff" stroke-width="3" stroke-linejoin="round"/></svg>')}`;

function securityHeaders(storeOrigin: string | null) {
  return { "content-security-policy": pageSecurityPolicy(storeOrigin), "x-content-type-options": "nosniff", "referrer-policy": "same-origin" };
}

function page(files: DashboardFile[]): string {
  const script = files.find((f) => f.name.endsWith(".js") && f.name.startsWith("main-"));
  const styles = files.filter((f) => f.name.endsWith(".css"));
  if (!script) throw new Error("the dashboard bundle has no main script");
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>Mediabox</title>
  <link rel="icon" href="${ICON}" />
  ${styles.map((s) => `<link rel="stylesheet" href="${DASHBOARD_ASSETS_PATH}/${s.name}" />`).join("\n  ")}
</head>
<body>
  <noscript>The Mediabox dashboard needs JavaScript. The API is documented at <a href="/docs">/docs</a>.</noscript>
  <div id="app"></div>
  <script type="module" src="${DASHBOARD_ASSETS_PATH}/${script.name}"></script>
</body>
</html>`;
}

/** `storeOrigin` answers the origin of the blob store's signed URLs (null: none to name). */
export function dashboardRoutes(storeOrigin: () => Promise<string | null>) {
  // Built on first request and kept for the server's life (per server, not per process).
  let built: Promise<{ files: Map<string, DashboardFile>; html: string; headers: Record<string, string> }> | null = null;
  const bundle = () =>
    (built ??= Promise.all([dashboardFiles(), storeOrigin()]).then(
      ([files, origin]) => ({ files: new Map(files.map((f) => [f.name, f])), html: page(files), headers: securityHeaders(origin) }),
      (err) => {
        built = null;
        throw err;
      },
    ));
  const servePage = async () => {
    const { html, headers } = await bundle();
    return new Response(html, { headers: { ...headers, "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" } });
  };
  const pageRoute = { detail: { summary: "The web dashboard (and the pages mailed links open)", security: [], hide: true } };
  const [root, verify, reset, invite] = DASHBOARD_PAGES as [string, string, string, string];
  return new Elysia({ tags: ["Dashboard"] })
    .get(root, servePage, pageRoute)
    .get(verify, servePage, pageRoute)
    .get(reset, servePage, pageRoute)
    .get(invite, servePage, pageRoute)
    .get(
      `${DASHBOARD_ASSETS_PATH}/:name`,
      async ({ params }) => {
        const { files, headers } = await bundle();
        const file = files.get(params.name);
        if (!file) throw new ApiError("NOT_FOUND", `no dashboard asset ${params.name}`);
        // Names carry their content hash: a cached copy is never stale.
        return new Response(file.bytes, { headers: { ...headers, "content-type": file.type, "cache-control": "public, max-age=31536000, immutable" } });
      },
      { detail: { summary: "Dashboard assets", security: [], hide: true } },
    );
}
