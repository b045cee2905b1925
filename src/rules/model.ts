/** The rule routes' request and response schemas (TypeBox). */
import { t } from "elysia";
import { Nullable, OneOf, Timestamp, Uuid } from "../http/shapes.ts";
import { CONDITION_FIELDS } from "./conditions.ts";
import { DESCRIPTION_MAX, NAME_MAX } from "./rules.ts";

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

export const ApplicationSchema = t.Object(
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

export const DryRunSchema = t.Object(
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

export const AutoMatchSchema = t.Object(
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

const DryRunLimit = t.Integer({ minimum: 1, maximum: 500, error: "limit must be an integer from 1 to 500" });

export const NewRule = t.Object({
  name: Name,
  description: t.Optional(Nullable(Description)),
  enabled: t.Optional(t.Boolean({ error: "enabled must be true or false" })),
  match: t.Optional(Match),
  conditions: t.Optional(Conditions),
  actions: Actions,
  position: t.Optional(Position),
});
export const RuleChange = t.Object({
  name: t.Optional(Name),
  description: t.Optional(Nullable(Description)),
  enabled: t.Optional(t.Boolean({ error: "enabled must be true or false" })),
  match: t.Optional(Match),
  conditions: t.Optional(Conditions),
  actions: t.Optional(Actions),
  position: t.Optional(Position),
});
/** Conditions not saved as a rule yet. */
export const UnsavedDryRun = t.Object({ match: t.Optional(Match), conditions: Conditions, limit: t.Optional(DryRunLimit) });
export const SavedDryRun = t.Object({ limit: t.Optional(DryRunLimit) });

export const ruleParams = t.Object({ rule_id: Uuid("rule_id") });
