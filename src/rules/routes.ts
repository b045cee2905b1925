/**
 * HTTP binding of /rules (Mediabox extension; docs/automation.md). Bodies are checked for their
 * shape here; conditions and actions by the domain (conditions.ts, actions.ts), whose messages
 * name the condition or action and what is wrong with it.
 */
import { Elysia, t } from "elysia";
import type { RuleDeps } from "./deps.ts";
import { permissions } from "../http/permissions.ts";
import { Nullable, OneOf, Page, page, pageQuery, Timestamp, Uuid, errorResponses } from "../http/shapes.ts";
import { webhookExists } from "../webhooks/webhooks.ts";
import type { ActionReferences } from "./actions.ts";
import { autoMatchStatus, learnIfStale, requestTraining } from "./auto-match.ts";
import { CONDITION_FIELDS } from "./conditions.ts";
import { applicationsOfFile, applicationsOfRule, createRule, deleteRule, DESCRIPTION_MAX, dryRun, getRule, listRules, NAME_MAX, updateRule } from "./rules.ts";

const ConditionShape = t.Object(
  {
    field: t.String({ description: `One of ${Object.keys(CONDITION_FIELDS).join(", ")}` }),
    op: t.String({ description: "contains, not_contains, equals, not_equals, starts_with, ends_with, regex (RE2), in, not_in, gt, gte, lt, lte, exists, not_exists: which ones depends on the field" }),
    value: t.Optional(t.Unknown({ description: "A string, a number, or an array of strings for in/not_in; none for exists/not_exists" })),
    case_sensitive: t.Optional(t.Boolean()),
    min_score: t.Optional(t.Number({ description: "predicted_tags / predicted_folder_id: the score (0-1] a prediction needs (default 0.3)" })),
  },
  { title: "RuleCondition" },
);

const ActionShape = t.Record(t.String(), t.Unknown(), {
  title: "RuleAction",
  description:
    '{"type":"add_tags","tags":[...]}, {"type":"remove_tags","tags":[...]}, {"type":"set_title","title":"..."}, ' +
    '{"type":"move","folder_id":"..."} or {"type":"move","project_id":"..."}, {"type":"call_webhook","webhook_id":"..."}, {"type":"run_schema","schema_id":"..."}',
});

const Outcome = t.Object({ type: t.String(), outcome: t.String() });

export const RuleSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    name: t.String(),
    description: Nullable(t.String()),
    enabled: t.Boolean(),
    match: t.String({ description: "all: every condition must hold; any: one is enough" }),
    conditions: t.Array(ConditionShape),
    actions: t.Array(ActionShape),
    position: t.Integer({ description: "Rules run in ascending position (then creation) order" }),
    created_by: Nullable(t.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    applied_files: t.Integer({ description: "Files the rule was applied to" }),
    last_applied_at: Nullable(Timestamp),
  },
  { title: "Rule" },
);

const ApplicationSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    rule_id: t.String({ format: "uuid" }),
    rule_name: t.String(),
    file_id: t.String({ format: "uuid" }),
    trigger: t.String({ description: "analysis (the file's analysis ended) or library (an apply-to-library job)" }),
    job_id: Nullable(t.String()),
    status: t.String({ description: "applied or failed" }),
    outcomes: t.Array(Outcome),
    error: Nullable(t.String()),
    applied_at: Timestamp,
  },
  { title: "RuleApplication" },
);

const DryRunSchema = t.Object(
  {
    matched_count: t.Integer(),
    scanned_count: t.Integer({ description: "Settled files looked at (analysis ended, not deleted)" }),
    files: t.Array(
      t.Object({
        id: t.String({ format: "uuid" }),
        filename: t.String(),
        title: Nullable(t.String()),
        media_type: t.String(),
        project_id: t.String(),
        folder_id: Nullable(t.String()),
      }),
    ),
    has_more: t.Boolean(),
  },
  { title: "RuleDryRun" },
);

const AutoMatchSchema = t.Object(
  {
    trained_at: Nullable(Timestamp),
    example_files: t.Integer({ description: "Files with text the model learned from" }),
    stale: t.Boolean({ description: "The library changed since it learned (a training is due)" }),
    labels: t.Array(t.Object({ kind: t.String({ description: "tag or folder" }), label: t.String({ description: "The tag (lower case) or the folder id" }), examples: t.Integer() })),
  },
  { title: "AutoMatching" },
);

const Name = t.String({ error: "name must be a string", description: `1-${NAME_MAX} characters, unique in the organization (case-insensitive)` });
const Description = t.String({ error: "description must be a string or null", description: `At most ${DESCRIPTION_MAX} characters` });
const Match = OneOf(["all", "any"] as const, "default all");
const Conditions = t.Array(t.Unknown(), { error: "conditions must be an array", description: "Conditions (see RuleCondition); none matches every file" });
const Actions = t.Array(t.Unknown(), { error: "actions must be an array", description: "Actions (see RuleAction), applied in order" });
const Position = t.Integer({ minimum: -1_000_000, maximum: 1_000_000, error: "position must be an integer" });

const ruleParams = t.Object({ rule_id: Uuid("rule_id") });

export function ruleRoutes(ctx: RuleDeps) {
  const { db, sql } = ctx;
  const refs = (orgId: string): ActionReferences => ({ webhookExists: (id) => webhookExists(db, orgId, id) });
  return new Elysia({ tags: ["Rules"] })
    .use(permissions)
    .post(
      "/rules",
      async ({ principal, body, set }) => {
        set.status = 201;
        const rule = await createRule(ctx, principal.orgId, principal.keyId, body, refs(principal.orgId));
        learnIfStale(ctx, principal.orgId, rule.conditions, "now");
        return rule;
      },
      {
        permission: "edit",
        body: t.Object({
          name: Name,
          description: t.Optional(Nullable(Description)),
          enabled: t.Optional(t.Boolean({ error: "enabled must be true or false" })),
          match: t.Optional(Match),
          conditions: t.Optional(Conditions),
          actions: Actions,
          position: t.Optional(Position),
        }),
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
      ({ principal, body }) => dryRun(db, ctx.files, principal.orgId, body, body.limit ?? 50),
      {
        permission: "view",
        body: t.Object({
          match: t.Optional(Match),
          conditions: Conditions,
          limit: t.Optional(t.Integer({ minimum: 1, maximum: 500, error: "limit must be an integer from 1 to 500" })),
        }),
        response: { 200: DryRunSchema, ...errorResponses([400]) },
        detail: { summary: "Files unsaved conditions would match (extension)", description: "Changes nothing." },
      },
    )
    .get("/rules/auto-matching", ({ principal }) => autoMatchStatus(db, principal.orgId), {
      permission: "view",
      response: { 200: AutoMatchSchema, ...errorResponses([]) },
      detail: { summary: "The auto-matching model: when it learned, from how many files, which tags and folders (extension)" },
    })
    .post(
      "/rules/auto-matching/train",
      ({ principal, set }) => {
        const job = requestTraining(ctx, principal.orgId, "now");
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
        learnIfStale(ctx, principal.orgId, rule.conditions, "now");
        return rule;
      },
      {
      permission: "edit",
      params: ruleParams,
      body: t.Object({
        name: t.Optional(Name),
        description: t.Optional(Nullable(Description)),
        enabled: t.Optional(t.Boolean({ error: "enabled must be true or false" })),
        match: t.Optional(Match),
        conditions: t.Optional(Conditions),
        actions: t.Optional(Actions),
        position: t.Optional(Position),
      }),
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
        return dryRun(db, ctx.files, principal.orgId, rule, body.limit ?? 50);
      },
      {
        permission: "view",
        params: ruleParams,
        body: t.Object({ limit: t.Optional(t.Integer({ minimum: 1, maximum: 500, error: "limit must be an integer from 1 to 500" })) }),
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
        const file = ctx.files.find(principal.orgId, params.file_id);
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
