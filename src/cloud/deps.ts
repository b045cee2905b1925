/**
 * The services the cloud feature uses: its connections (providers, OAuth, sealed tokens), and
 * the upload path's (an imported file is stored as an upload is). The composition root
 * (src/app.ts) builds them once and passes its context, which satisfies this interface.
 */
import type { CloudConnections } from "./connections.ts";
import type { IngestDeps } from "../ingest/deps.ts";

export interface CloudDeps extends IngestDeps {
  /** Cloud drive providers, OAuth flows and connections (their tokens, refreshes, picker). */
  cloud: CloudConnections;
}
