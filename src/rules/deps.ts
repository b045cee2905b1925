/**
 * The services the rules feature uses. The composition root (src/app.ts) builds them once and
 * passes its context, which satisfies this interface: the feature names what it needs and no more.
 */
import type { Clock } from "../clock.ts";
import type { CloudConnections } from "../cloud/connections.ts";
import type { Config } from "../config.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { LibraryEvents } from "../events/library-events.ts";
import type { FileRepository } from "../files/file-repository.ts";
import type { JobRunner } from "../jobs/runner.ts";
import type { MediaKinds } from "../kinds/media-kind.ts";

export interface RuleDeps {
  config: Config;
  sql: SqlClient;
  /** The only writer of the `files` table. */
  files: FileRepository;
  /** The media kinds: what each kind's files offer rule conditions. */
  kinds: MediaKinds;
  clock: Clock;
  jobs: JobRunner;
  /** What happens in the library (a file processed, a batch finished), for rules and webhooks to react to. */
  libraryEvents: LibraryEvents;
  /** Cloud drive providers, OAuth flows and connections (their tokens, refreshes, picker). */
  cloud: CloudConnections;
}
