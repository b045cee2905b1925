/**
 * The services the edge feature uses. The composition root (src/app.ts) builds them once and
 * passes its context, which satisfies this interface: the feature names what it needs and no more.
 */
import type { Accounts } from "../accounts/accounts.ts";
import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { RateLimits } from "../ratelimit/limiter.ts";

export interface EdgeDeps {
  config: Config;
  sql: SqlClient;
  clock: Clock;
  limiter: RateLimits;
  /** Users, sessions, sign-in flows, their mailer and the site's identity provider. */
  accounts: Accounts;
}
