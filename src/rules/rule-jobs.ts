/**
 * When rules run: a file whose processing ended gets a `file.automate` job, enqueued in the
 * transaction that records the end (only for organizations with an enabled rule, so a library
 * without rules pays nothing), and `rules.apply` walks the library for one rule on demand, with
 * progress, resuming where it stopped after a crash (files it already handled are recorded with
 * its job id and skipped).
 */
import type { AppContext } from "../context.ts";
import { PermanentJobError, type QueueDefinition } from "../jobs/runner.ts";
import { applicationsOfJob, applyRulesTo, countSettledFiles, enabledRules, getRule, handledByJob, hasEnabledRules, settledFiles } from "./rules.ts";

/** Queues the automation of every file whose processing ends (see LibraryEvents). */
export function automateProcessedFiles(ctx: AppContext): void {
  ctx.libraryEvents.on("file.processed", ({ file, outcome }) => {
    if (!hasEnabledRules(ctx.db, file.org_id)) return;
    ctx.jobs.enqueue({ queue: "file.automate", orgId: file.org_id, payload: { fileId: file.id, outcome } });
  });
}

export function fileAutomateQueue(ctx: AppContext): QueueDefinition<"file.automate"> {
  return {
    name: "file.automate",
    concurrency: 2,
    async handler(job) {
      const { fileId, outcome } = job.payload;
      const file = ctx.files.byId(fileId);
      if (!file || file.deleted_at) return [{ file_id: fileId, skipped: "file deleted" }];
      if (outcome !== "completed") return [{ file_id: fileId, rules_applied: [] }];
      const applied = await job.write(() => applyRulesTo(ctx.db, ctx.clock, ctx.files, file.id, enabledRules(ctx.db, file.org_id), { kind: "analysis", jobId: null }));
      return [{ file_id: fileId, rules_applied: applied.map((a) => ({ rule_id: a.rule.id, status: a.application.status })) }];
    },
  };
}

/** Files read per page while applying a rule to the library. */
const PAGE = 200;

export function rulesApplyQueue(ctx: AppContext): QueueDefinition<"rules.apply"> {
  return {
    name: "rules.apply",
    concurrency: 1,
    timeoutMs: 6 * 60 * 60 * 1000,
    async handler(job) {
      const orgId = job.orgId!;
      let rule;
      try {
        rule = getRule(ctx.db, orgId, job.payload.ruleId);
      } catch {
        throw new PermanentJobError(`rule ${job.payload.ruleId} was deleted`);
      }
      const total = countSettledFiles(ctx.db, orgId);
      let scanned = 0;
      for (let after = ""; ; ) {
        const page = settledFiles(ctx.db, orgId, after, PAGE);
        if (!page.length) break;
        for (const file of page) {
          job.signal.throwIfAborted();
          scanned += 1;
          if (handledByJob(ctx.db, job.jobId, file.id)) continue;
          await job.write(() => applyRulesTo(ctx.db, ctx.clock, ctx.files, file.id, [rule], { kind: "library", jobId: job.jobId }));
          job.progress(total ? Math.min(99, Math.floor((scanned / total) * 100)) : 99);
        }
        after = page[page.length - 1]!.id;
      }
      // Counted from the records, so files applied before a restart count too.
      const { applied, failed } = applicationsOfJob(ctx.db, job.jobId);
      return [{ rule_id: rule.id, scanned_files: scanned, applied_files: applied, failed_files: failed }];
    },
  };
}
