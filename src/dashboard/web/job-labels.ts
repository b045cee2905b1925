/** What each job queue does, in the user's words (the Activity page's job monitor). test/job-labels.test.ts keeps it complete. */
export const JOB_LABELS: Record<string, string> = {
  "file.process": "Analyse a file",
  "image.variants": "Render image variants",
  "image.embed": "Index an image for similarity",
  "document.embed": "Index a document for search",
  "batch.ingest": "Store a batch upload",
  "cloud.import": "Import from a cloud drive",
  "cloud.export": "Send to a cloud drive",
  "export.expire": "Remove an expired export",
  "file.automate": "Run the rules on a file",
  "rules.apply": "Apply a rule to the library",
  "file.schema": "Fill a custom schema",
  "rules.learn": "Learn auto-matching from tagged files",
  "webhook.deliver": "Deliver a webhook",
  "mail.poll": "Check a mailbox",
  "people.cluster": "Group faces into people",
};
