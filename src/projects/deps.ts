/**
 * The services the projects feature uses. The composition root (src/app.ts) builds them once and
 * passes its context, which satisfies this interface: the feature names what it needs and no more.
 */
import type { Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";

export interface ProjectDeps {
  sql: SqlClient;
  clock: Clock;
}
