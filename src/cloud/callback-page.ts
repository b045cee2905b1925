/**
 * The page the OAuth popup lands on (GET .../callback): it posts `{type: "oauth-complete",
 * success, connection | error}` to `window.opener` at one exact origin (never "*", so no other
 * site that opened the popup learns of the connection) and closes. The page carries a CSP that
 * allows only its own nonce'd script, and is never cached or sent as a referrer (its URL held the
 * authorization code).
 */
import { randomBytes } from "node:crypto";
import type { PopupConnection } from "./connections.ts";

export type OAuthMessage =
  | { type: "oauth-complete"; success: true; connection: PopupConnection }
  | { type: "oauth-complete"; success: false; error: string; code: string };

/** JSON that is safe inside a <script> element (no "</script>", no U+2028 surprises). */
const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function callbackPage(message: OAuthMessage, targetOrigin: string, status: number): Response {
  const nonce = randomBytes(16).toString("base64");
  const text = message.success
    ? `Connected ${message.connection.provider_email ?? message.connection.display_name ?? message.connection.provider}. You can close this window.`
    : `The connection failed: ${message.error}`;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Mediabox cloud connection</title></head>
<body><p id="status">${escapeHtml(text)}</p>
<script nonce="${nonce}">
(function () {
  var message = ${scriptJson(message)};
  var origin = ${scriptJson(targetOrigin)};
  if (window.opener && origin !== "null") {
    window.opener.postMessage(message, origin);
    window.close();
  }
})();
</script></body></html>`;
  return new Response(html, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
    },
  });
}
