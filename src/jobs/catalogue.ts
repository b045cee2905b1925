/**
 * Every queue of the appliance and the payload its jobs carry: the one list that makes
 * `enqueue` and queue definitions type-checked per queue (a job enqueued with the wrong payload,
 * or on a queue nobody defines, does not compile). Tests add their own queues by declaration
 * merging (test/support/test-queues.ts).
 */

/** Jobs about one stored file. */
export interface FileJobPayload {
  fileId: string;
}

export interface JobPayloads {
  /** A stored file's pipeline (images, documents; other types are recorded as stored). */
  "file.process": FileJobPayload;
  /** Re-renders an image's variants (POST /files/{id}/trigger-variants). */
  "image.variants": FileJobPayload;
  /** Embeds an image with the configured image model (after a model change). */
  "image.embed": FileJobPayload;
  /** Embeds a document's pending chunks. */
  "document.embed": FileJobPayload;
  /** Stores the accepted files of a large batch upload. */
  "batch.ingest": { sessionId: string };
  /** Downloads the files of a cloud import into their placeholders (cloud/cloud-jobs.ts). */
  "cloud.import": { cloudJobId: string };
  /** Uploads library files to a cloud drive (cloud/cloud-jobs.ts). */
  "cloud.export": { cloudJobId: string };
  /** Runs the organization's rules over a file whose processing ended (rules/rule-jobs.ts). */
  "file.automate": { fileId: string; outcome: "completed" | "failed" };
  /** Applies one rule to every settled file of the library, with progress (POST /rules/{id}/apply). */
  "rules.apply": { ruleId: string };
  /** Fills a custom extraction schema for a file: a rule's run_schema action (rules/rule-jobs.ts). */
  "file.schema": { fileId: string; schemaId: string };
  /** Trains an organization's auto-matching model on its library (rules/auto-match.ts). */
  "rules.learn": { orgId: string; onlyIfChanged?: boolean };
  /** One attempt at sending a webhook delivery; retried with backoff (webhooks/delivery.ts). */
  "webhook.deliver": { deliveryId: string };
  /** Takes the new messages of one mail account (mail/mail-intake.ts). */
  "mail.poll": { accountId: string };
  /** Clusters an organization's faces that have no person yet into new people (people/people-jobs.ts). */
  "people.cluster": { orgId: string };
  /** Deletes an export's file once its download link has expired. */
  "export.expire": { key: string };
}

export type QueueName = keyof JobPayloads;
