/**
 * The `permission` route option: answers 403 when the API key or the session's role lacks the
 * action a route needs (the guard in src/edge/ has already identified the caller).
 */
import { Elysia } from "elysia";
import type { Permission } from "../auth/permissions.ts";
import { ApiError } from "../errors.ts";
import { principalOf } from "./request-context.ts";

/** Route option `permission: "view" | "edit" | "delete"`; also gives the handler its `principal`. */
export const permissions = new Elysia({ name: "mediabox-permissions" }).macro({
  permission: (needed: Permission) => ({
    // transform runs before body validation, so a caller without the permission learns nothing more.
    transform({ request }) {
      const principal = principalOf(request);
      if (!principal.permissions.has(needed)) {
        throw new ApiError(
          "PERMISSION_DENIED",
          principal.session
            ? `your role (${principal.session.role}) lacks the ${needed.toUpperCase()} permission in this organization`
            : `this API key lacks the ${needed.toUpperCase()} permission`,
        );
      }
    },
    resolve({ request }) {
      return { principal: principalOf(request) };
    },
  }),
});
