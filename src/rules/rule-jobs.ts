/**
 * What happens after a file's processing ends, and rules over the library. The end of processing
 * enqueues a `file.automate` job in the transaction that records it, only for organizations with
 * an enabled rule or a webhook that wants file events (a library without automation pays
 * nothing). The job runs the rules, then sends `rule.applied` for each rule applied and
 * `file.completed` / `file.failed` with the file as the rules left it. `rules.apply` walks the
 * library for one rule on demand, with progress, resuming where it stopped after a crash (files
 * it already handled are recorded with its job id and skipped).
 */
import type { RuleDeps } from "./deps.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { PermanentJobError, type QueueDefinition } from "../jobs/runner.ts";
import { fileEventData, webhookDeps } from "../webhooks/delivery.ts";
import { emitEvent, hasSubscribers } from "../webhooks/webhooks.ts";
import { learnIfStale, modelStale, trainOrganization } from "./auto-match.ts";
import { usesPredictions } from "./conditions.ts";
import type { ActionEffects } from "./actions.ts";
import type { ImageDeps } from "../images/deps.ts";
import { runSchemaOnFile } from "./schema-action.ts";
import { getCustomSchema } from "../custom-schemas/custom-schemas.ts";
import { applicationsOfJob, applyRulesTo, countSettledFiles, enabledRules, getRule, handledByJob, hasEnabledRules, settledFiles, type Applied, type Rule } from "./rules.ts";

const FILE_EVENTS = ["file.completed", "file.failed", "rule.applied"];

/** A run_schema action queues a `file.schema` job in the application's transaction `tx` (a crash loses none; a rolled-back application queues none). */
const actionEffects = (ctx: RuleDeps, tx: SqlClient): ActionEffects => ({
  async runSchema(file, schemaId) {
    await ctx.jobs.submit({ queue: "file.schema", orgId: file.org_id, payload: { fileId: file.id, schemaId }, dedupeKey: `file.schema:${file.id}:${schemaId}`, maxAttempts: 3 }, tx);
  },
});

/** Queues the automation of every file whose processing ends (see LibraryEvents), in the transaction that records the end. */
export function automateProcessedFiles(ctx: RuleDeps): void {
  ctx.libraryEvents.on("file.processed", async (tx, { file, outcome }) => {
    if (!(await hasEnabledRules(tx, file.org_id)) && !(await hasSubscribers(tx, file.org_id, FILE_EVENTS))) return;
    await ctx.jobs.submit({ queue: "file.automate", orgId: file.org_id, payload: { fileId: file.id, outcome } }, tx);
  });
}

/**
 * Applies `rules` to the file and records rule.applied for each application (to subscribers, and
 * to the receivers the rule's call_webhook actions name), all in the caller's transaction `tx`:
 * the file's changes, the record of each application, the jobs its actions queue and the
 * deliveries commit together or not at all.
 */
export async function applyAndAnnounce(ctx: RuleDeps, tx: SqlClient, fileId: string, rules: Rule[], trigger: { kind: "analysis" | "library"; jobId: string | null }): Promise<Applied[]> {
  const applied = await applyRulesTo(tx, ctx.clock, ctx, fileId, rules, trigger, actionEffects(ctx, tx));
  const deps = webhookDeps(ctx);
  for (const a of applied) {
    if (a.application.status !== "applied") continue;
    const file = (await ctx.files.withTx(tx).byId(a.application.file_id))!;
    await emitEvent(deps, tx, file.org_id, "rule.applied", { rule: { id: a.rule.id, name: a.rule.name }, application: a.application, ...fileEventData(file) }, a.webhookIds);
  }
  return applied;
}

export function fileAutomateQueue(ctx: RuleDeps): QueueDefinition<"file.automate"> {
  const deps = webhookDeps(ctx);
  return {
    name: "file.automate",
    concurrency: 2,
    async handler(job) {
      const { fileId, outcome } = job.payload;
      const file = await ctx.files.byId(fileId);
      if (!file || file.deleted_at) return [{ file_id: fileId, skipped: "file deleted" }];
      const rules = await enabledRules(ctx.sql, file.org_id);
      const applied = await job.transaction(async (tx) => {
        const done = outcome === "completed" ? await applyAndAnnounce(ctx, tx, file.id, rules, { kind: "analysis", jobId: null }) : [];
        await emitEvent(deps, tx, file.org_id, outcome === "completed" ? "file.completed" : "file.failed", fileEventData((await ctx.files.withTx(tx).byId(file.id))!));
        return done;
      });
      // The library changed (this file at least): learn it again, at most every MEDIABOX_AUTO_MATCH_RETRAIN_SECONDS.
      await learnIfStale(ctx, file.org_id, rules.flatMap((r) => r.conditions), "throttled");
      return [{ file_id: fileId, rules_applied: applied.map((a) => ({ rule_id: a.rule.id, status: a.application.status })) }];
    },
  };
}

/** Files read per page while applying a rule to the library. */
const PAGE = 200;

export function rulesApplyQueue(ctx: RuleDeps): QueueDefinition<"rules.apply"> {
  return {
    name: "rules.apply",
    concurrency: 1,
    timeoutMs: 6 * 60 * 60 * 1000,
    async handler(job) {
      const orgId = job.orgId!;
      let rule;
      try {
        rule = await getRule(ctx.sql, orgId, job.payload.ruleId);
      } catch {
        throw new PermanentJobError(`rule ${job.payload.ruleId} was deleted`);
      }
      // A rule over the whole library meets the library as it is now.
      if (usesPredictions(rule.conditions) && (await modelStale(ctx.sql, orgId))) await trainOrganization(ctx, orgId);
      const total = await countSettledFiles(ctx.sql, orgId);
      let scanned = 0;
      for (let after = ""; ; ) {
        const page = await settledFiles(ctx.sql, orgId, after, PAGE);
        if (!page.length) break;
        for (const file of page) {
          job.signal.throwIfAborted();
          scanned += 1;
          if (await handledByJob(ctx.sql, job.jobId, file.id)) continue;
          await job.transaction((tx) => applyAndAnnounce(ctx, tx, file.id, [rule], { kind: "library", jobId: job.jobId }));
          job.progress(total ? Math.min(99, Math.floor((scanned / total) * 100)) : 99);
        }
        after = page[page.length - 1]!.id;
      }
      // Counted from the records, so files applied before a restart count too.
      const { applied, failed } = await applicationsOfJob(ctx.sql, job.jobId);
      return [{ rule_id: rule.id, scanned_files: scanned, applied_files: applied, failed_files: failed }];
    },
  };
}

/** Trains an organization's auto-matching model (auto-match.ts). */
export function rulesLearnQueue(ctx: RuleDeps): QueueDefinition<"rules.learn"> {
  return {
    name: "rules.learn",
    concurrency: 1,
    timeoutMs: 60 * 60 * 1000,
    async handler(job) {
      if (job.payload.onlyIfChanged && !(await modelStale(ctx.sql, job.payload.orgId))) return [{ skipped: "the library has not changed since the model learned" }];
      const status = await trainOrganization(ctx, job.payload.orgId);
      return [{ trained_at: status.trained_at, example_files: status.example_files, labels: status.labels.length }];
    },
  };
}

/** Fills a custom extraction schema for a file, for a rule's run_schema action (images/schema-run.ts). */
export function fileSchemaQueue(ctx: ImageDeps): QueueDefinition<"file.schema"> {
  return {
    name: "file.schema",
    concurrency: 1,
    async handler(job) {
      const { fileId, schemaId } = job.payload;
      const file = await ctx.files.byId(fileId);
      if (!file || file.deleted_at) return [{ file_id: fileId, skipped: "file deleted" }];
      let schema;
      try {
        schema = await getCustomSchema(ctx.sql, file.org_id, schemaId);
      } catch {
        throw new PermanentJobError(`custom extraction schema ${schemaId} was deleted`);
      }
      const result = await runSchemaOnFile(ctx, file, schema);
      return [{ file_id: file.id, schema_id: schema.id, source: result.source, filled: result.filled, unfilled: result.unfilled }];
    },
  };
}
