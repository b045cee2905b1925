/**
 * The services the payments feature uses. The composition root (src/app.ts) builds them once and
 * passes its context, which satisfies this interface: the feature names what it needs and no more.
 */
import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import type { SqlClient } from "../db/sql-client.ts";

export interface PaymentDeps {
  config: Config;
  /** The data-access port (this feature is on it: SQLite or PostgreSQL alike). */
  sql: SqlClient;
  clock: Clock;
  log: Logger;
}
