/**
 * HTTP binding of /rules (Mediabox extension; docs/automation.md). Bodies are checked for their
 * shape here; conditions and actions by the domain (conditions.ts, actions.ts), whose messages
 * name the condition or action and what is wrong with it.
 */
import { Elysia, t } from "elysia";
import type { RuleDeps } from "./deps.ts";
import { permissions } from "../http/permissions.ts";
import { Page, page, pageQuery, errorResponses } from "../http/shapes.ts";
import { webhookExists } from "../webhooks/webhooks.ts";
import type { ActionReferences } from "./actions.ts";
import { autoMatchStatus, learnIfStale, requestTraining } from "./auto-match.ts";
import { applicationsOfFile, applicationsOfRule, createRule, deleteRule, dryRun, getRule, listRules, updateRule } from "./rules.ts";
import { ApplicationSchema, AutoMatchSchema, DryRunSchema, NewRule, RuleChange, RuleSchema, SavedDryRun, UnsavedDryRun, ruleParams } from "./model.ts";

export function ruleRoutes(ctx: RuleDeps) {
  const { sql } = ctx;
  const refs = (orgId: string): ActionReferences => ({ webhookExists: (id) => webhookExists(sql, orgId, id) });
  return new Elysia({ tags: ["Rules"] })
    .use(permissions)
    .post(
      "/rules",
      async ({ principal, body, set }) => {
        set.status = 201;
        const rule = await createRule(ctx, principal.orgId, principal.keyId, body, refs(principal.orgId));
        await learnIfStale(ctx, principal.orgId, rule.conditions, "now");
        return rule;
      },
      {
        permission: "edit",
        body: NewRule,
        response: { 201: RuleSchema, ...errorResponses([400, 404, 409]) },
        detail: { summary: "Create a rule (extension)", description: "Runs on every file whose analysis ends from now on; POST /rules/{id}/apply runs it over the library." },
      },
    )
    .get(
      "/rules",
      async ({ principal, query }) => {
        const { items, total } = await listRules(sql, principal.orgId, query.limit, query.offset);
        return page(items, total, query.limit, query.offset);
      },
      {
        permission: "view",
        query: t.Object(pageQuery(200, 50)),
        response: { 200: Page(RuleSchema), ...errorResponses([400]) },
        detail: { summary: "List rules in the order they run (extension)" },
      },
    )
    .post(
      "/rules/dry-run",
      ({ principal, body }) => dryRun(sql, ctx, principal.orgId, body, body.limit ?? 50),
      {
        permission: "view",
        body: UnsavedDryRun,
        response: { 200: DryRunSchema, ...errorResponses([400]) },
        detail: { summary: "Files unsaved conditions would match (extension)", description: "Changes nothing." },
      },
    )
    .get("/rules/auto-matching", ({ principal }) => autoMatchStatus(sql, principal.orgId), {
      permission: "view",
      response: { 200: AutoMatchSchema, ...errorResponses([]) },
      detail: { summary: "The auto-matching model: when it learned, from how many files, which tags and folders (extension)" },
    })
    .post(
      "/rules/auto-matching/train",
      async ({ principal, set }) => {
        const job = await requestTraining(ctx, principal.orgId, "now");
        set.status = 202;
        return { job_id: job.id, deduplicated: job.deduplicated };
      },
      {
        permission: "edit",
        response: { 202: t.Object({ job_id: t.String(), deduplicated: t.Boolean({ description: "A training was already waiting or running: that job" }) }), ...errorResponses([]) },
        detail: { summary: "Train the auto-matching model on the library now (extension)", description: "A rules.learn job; GET /job/{job_id} follows it." },
      },
    )
    .get("/rules/:rule_id", ({ principal, params }) => getRule(sql, principal.orgId, params.rule_id), {
      permission: "view",
      params: ruleParams,
      response: { 200: RuleSchema, ...errorResponses([400, 404]) },
      detail: { summary: "Get a rule (extension)" },
    })
    .patch(
      "/rules/:rule_id",
      async ({ principal, params, body }) => {
        const rule = await updateRule(ctx, principal.orgId, params.rule_id, body, refs(principal.orgId));
        await learnIfStale(ctx, principal.orgId, rule.conditions, "now");
        return rule;
      },
      {
      permission: "edit",
      params: ruleParams,
      body: RuleChange,
      response: { 200: RuleSchema, ...errorResponses([400, 404, 409]) },
      detail: { summary: "Change a rule (extension)", description: "Fields left out stay as they are; conditions and actions are replaced whole." },
      },
    )
    .delete(
      "/rules/:rule_id",
      async ({ principal, params, set }) => {
        await deleteRule(sql, principal.orgId, params.rule_id);
        set.status = 204;
      },
      {
        permission: "delete",
        params: ruleParams,
        response: { 204: t.Void(), ...errorResponses([400, 404]) },
        detail: { summary: "Delete a rule (extension)", description: "Files keep what it changed; its applications stay in their history." },
      },
    )
    .post(
      "/rules/:rule_id/dry-run",
      async ({ principal, params, body }) => {
        const rule = await getRule(sql, principal.orgId, params.rule_id);
        return dryRun(sql, ctx, principal.orgId, rule, body.limit ?? 50);
      },
      {
        permission: "view",
        params: ruleParams,
        body: SavedDryRun,
        response: { 200: DryRunSchema, ...errorResponses([400, 404]) },
        detail: { summary: "Files a saved rule would touch (extension)", description: "Changes nothing." },
      },
    )
    .post(
      "/rules/:rule_id/apply",
      async ({ principal, params, set }) => {
        const rule = await getRule(sql, principal.orgId, params.rule_id);
        const job = await ctx.jobs.submit({ queue: "rules.apply", orgId: principal.orgId, payload: { ruleId: rule.id }, dedupeKey: `rules.apply:${rule.id}` });
        set.status = 202;
        return { job_id: job.id, rule_id: rule.id, status: "pending", deduplicated: job.deduplicated };
      },
      {
        permission: "edit",
        params: ruleParams,
        response: {
          202: t.Object({ job_id: t.String(), rule_id: t.String(), status: t.String(), deduplicated: t.Boolean({ description: "An apply job of this rule was already waiting or running: that job" }) }),
          ...errorResponses([400, 404]),
        },
        detail: { summary: "Apply a rule to the library (extension)", description: "A rules.apply job; follow it with GET /job/{job_id} (progress in percent, results at the end)." },
      },
    )
    .get(
      "/rules/:rule_id/applications",
      async ({ principal, params, query }) => {
        const { items, total } = await applicationsOfRule(sql, principal.orgId, params.rule_id, query.limit, query.offset);
        return page(items, total, query.limit, query.offset);
      },
      {
        permission: "view",
        params: ruleParams,
        query: t.Object(pageQuery(200, 50)),
        response: { 200: Page(ApplicationSchema), ...errorResponses([400, 404]) },
        detail: { summary: "A rule's applications, newest first (extension)" },
      },
    )
    .get(
      "/files/:file_id/rule-applications",
      async ({ principal, params, query }) => {
        const file = await ctx.files.find(principal.orgId, params.file_id);
        const { items, total } = await applicationsOfFile(sql, principal.orgId, file.id, query.limit, query.offset);
        return page(items, total, query.limit, query.offset);
      },
      {
        permission: "view",
        params: t.Object({ file_id: t.String({ description: "File id or its first 8 characters" }) }),
        query: t.Object(pageQuery(200, 50)),
        response: { 200: Page(ApplicationSchema), ...errorResponses([400, 404, 409]) },
        detail: { summary: "The rules applied to a file, newest first (extension)" },
      },
    );
}
