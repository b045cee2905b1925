/**
 * The job queues tests define for themselves, added to the catalogue by declaration merging so
 * the scheduler's tests type-check like application code: `t.*` queues in the runner tests,
 * `test.*` queues in fixtures. Their payloads are whatever each test sends.
 */
declare module "../../src/jobs/catalogue.ts" {
  interface JobPayloads {
    [queue: `t.${string}`]: any;
    [queue: `test.${string}`]: any;
  }
}

export {};
