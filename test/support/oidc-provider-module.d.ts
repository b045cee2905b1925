/** The part of oidc-provider's API the tests use (the package ships no types). */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: any[]) => void): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<any>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: Record<string, unknown>): Promise<void>;
    Grant: any;
    AccessToken: any;
  }
}
