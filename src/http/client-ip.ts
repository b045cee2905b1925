/**
 * The caller's IP address. X-Forwarded-For is believed only hop by hop through configured
 * trusted proxies (addresses, CIDR ranges or the names loopback / linklocal / uniquelocal);
 * with none configured the socket's peer address is used and the header ignored.
 */
import type { IncomingMessage } from "node:http";
import proxyaddr from "proxy-addr";

export type TrustFn = (address: string, hop: number) => boolean;

export function compileTrust(trustedProxies: string[]): TrustFn {
  return proxyaddr.compile(trustedProxies);
}

export function clientIp(request: Request, socketAddress: string, trust: TrustFn): string {
  // proxy-addr reads only these two members of a Node request.
  const shim = {
    headers: { "x-forwarded-for": request.headers.get("x-forwarded-for") ?? undefined },
    socket: { remoteAddress: socketAddress },
  } as unknown as IncomingMessage;
  try {
    return proxyaddr(shim, trust);
  } catch {
    return socketAddress;
  }
}
