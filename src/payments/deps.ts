/**
 * The services the payments feature uses. The composition root (src/app.ts) builds them once and
 * passes its context, which satisfies this interface: the feature names what it needs and no more.
 */
import type { Database } from "bun:sqlite";
import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";

export interface PaymentDeps {
  config: Config;
  db: Database;
  clock: Clock;
  log: Logger;
}
