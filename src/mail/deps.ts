/**
 * The services mail intake uses: the upload path's (attachments are stored as uploads are) and
 * the cloud connections, whose token vault seals mailbox passwords too. The composition root
 * (src/app.ts) builds them once and passes its context, which satisfies this interface.
 */
import type { CloudConnections } from "../cloud/connections.ts";
import type { IngestDeps } from "../ingest/deps.ts";

export interface MailDeps extends IngestDeps {
  /** Cloud drive providers, OAuth flows and connections (their tokens, refreshes, picker). */
  cloud: CloudConnections;
}
