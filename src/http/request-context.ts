/**
 * What the guard learned about a request before routing (client IP, caller), kept beside the
 * Request object so later hooks and handlers read it instead of recomputing it.
 */
import type { Principal } from "../auth/principal.ts";
import type { Config } from "../config.ts";
import { ApiError } from "../errors.ts";

export interface RequestInfo {
  ip: string;
  principal: Principal | null;
}

const infos = new WeakMap<Request, RequestInfo>();

export function setRequestInfo(request: Request, info: RequestInfo): void {
  infos.set(request, info);
}

export function requestInfo(request: Request): RequestInfo {
  return infos.get(request) ?? { ip: "unknown", principal: null };
}

/** The authenticated caller; the guard has already answered 401 for anonymous calls to protected routes. */
export function principalOf(request: Request): Principal {
  const principal = infos.get(request)?.principal;
  if (!principal) throw new ApiError("UNAUTHENTICATED", "authentication required");
  return principal;
}

/** Where links handed to clients must point: the configured public URL, else the origin the client used. */
export function publicOrigin(config: Pick<Config, "publicUrl">, request: Request): string {
  return config.publicUrl?.replace(/\/+$/, "") ?? new URL(request.url).origin;
}
