/**
 * Headers every response carries: nosniff, so no browser reads an API answer or a stored file
 * as a type it was not sent as. Pages add their own CSP (the dashboard, /docs).
 */
import { Elysia } from "elysia";

export const NOSNIFF = { "x-content-type-options": "nosniff" } as const;

export function securityHeaders() {
  return new Elysia({ name: "mediabox-security-headers" }).onRequest(({ set }) => {
    Object.assign(set.headers, NOSNIFF);
  });
}
