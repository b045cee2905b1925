/** HTTP binding of near-duplicates (extensions): the groups, trashing all but one of a group, and "not duplicates". */
import { Elysia, t } from "elysia";
import type { LibraryDeps } from "./deps.ts";
import { badRequest } from "../errors.ts";
import { permissions } from "../http/permissions.ts";
import { publicOrigin } from "../http/request-context.ts";
import { Nullable, Page, page, pageQuery, Uuid, errorResponses } from "../http/shapes.ts";
import { isoAt } from "../clock.ts";
import { dismissDuplicates, groupMemberships, undismissDuplicates, withMembers, type DuplicateGroup } from "../duplicates/duplicate-store.ts";
import { batchDeleteFiles } from "./file-edits.ts";
import { FileUrls } from "../files/file-urls.ts";

const GroupView = t.Object(
  {
    group_id: t.String({ description: "Stable while the group's members stay the same" }),
    file_count: t.Integer(),
    best_file_id: t.String({ format: "uuid", description: "The one to keep: the largest, then the sharpest" }),
    files: t.Array(
      t.Object({
        id: t.String({ format: "uuid" }),
        filename: t.String(),
        width: Nullable(t.Integer()),
        height: Nullable(t.Integer()),
        size_bytes: t.Integer(),
        sharpness: t.Number({ description: "Variance of the Laplacian of a 256-px grey copy: higher is crisper" }),
        created_at: t.String({ format: "date-time" }),
        content_created_at: Nullable(t.String({ format: "date-time" })),
        thumbnail_url: Nullable(t.String({ description: "Signed URL of the small_256 variant (1 hour)" })),
        is_best: t.Boolean(),
      }),
      { description: "The best first, then by upload time" },
    ),
  },
  { title: "DuplicateGroup" },
);

const NotDuplicatesBody = t.Object({
  file_ids: t.Array(Uuid("file_ids"), { minItems: 2, maxItems: 100, error: "file_ids: 2-100 file UUIDs" }),
});

const TrashResult = t.Object(
  {
    groups: t.Array(
      t.Object({
        keep_file_id: t.String(),
        group_id: Nullable(t.String()),
        status: t.Union([t.Literal("trashed"), t.Literal("no_group"), t.Literal("not_found")], { description: "no_group: the file has no live near-duplicate (nothing trashed)" }),
        trashed_file_ids: t.Array(t.String()),
        failed: t.Array(t.Object({ id: t.String(), message: t.String() })),
      }),
    ),
    trashed_count: t.Integer(),
  },
  { title: "DuplicateTrashResult" },
);

async function groupView(ctx: LibraryDeps, urls: FileUrls, group: DuplicateGroup) {
  const files = await Promise.all(
    group.members.map(async (m) => {
      const row = await ctx.files.byId(m.id);
      const variants = row ? await urls.variants(row) : {};
      return {
        id: m.id,
        filename: m.filename,
        width: m.width,
        height: m.height,
        size_bytes: m.sizeBytes,
        sharpness: m.sharpness,
        created_at: m.createdAt,
        content_created_at: m.contentCreatedAt,
        thumbnail_url: variants.small_256 ?? null,
        is_best: m.id === group.best,
      };
    }),
  );
  return { group_id: group.id, file_count: files.length, best_file_id: group.best, files };
}

/** The ids named, each a live file of the organization (404 FILE_NOT_FOUND otherwise, before anything is recorded), named once. */
async function liveFileIds(ctx: LibraryDeps, orgId: string, named: string[]): Promise<string[]> {
  const ids = named.map((id) => id.toLowerCase());
  if (new Set(ids).size !== ids.length) throw badRequest("file_ids: must be unique");
  for (const id of ids) await ctx.files.find(orgId, id);
  return ids;
}

export function duplicateRoutes(ctx: LibraryDeps) {
  return new Elysia({ tags: ["Duplicates"] })
    .use(permissions)
    .get(
      "/duplicates/groups",
      async ({ principal, query, request }) => {
        // Every group is ordered from the pairs alone; only the page's members are read.
        const groups = await groupMemberships(ctx.sql, principal.orgId);
        const urls = new FileUrls(ctx, publicOrigin(ctx.config, request));
        const items = await Promise.all((await withMembers(ctx.sql, groups.slice(query.offset, query.offset + query.limit))).map((g) => groupView(ctx, urls, g)));
        return page(items, groups.length, query.limit, query.offset);
      },
      {
        permission: "view",
        query: t.Object(pageQuery(100, 20)),
        response: { 200: Page(GroupView), ...errorResponses([400]) },
        detail: {
          summary: "Groups of near-duplicate images: bursts, resized, re-encoded, slightly cropped or re-exposed copies (extension)",
          description: "Each group's files with the best one first (the largest, then the sharpest); the largest groups first. Query: limit (1-100, default 20), offset.",
        },
      },
    )
    .post(
      "/duplicates/groups/trash",
      async ({ principal, body }) => {
        const keep = body.keep_file_ids.map((id) => id.toLowerCase());
        if (new Set(keep).size !== keep.length) throw badRequest("keep_file_ids: must be unique");
        const groups = await groupMemberships(ctx.sql, principal.orgId);
        // One entry after the other: an entry's trashing is seen by the next.
        const results = [];
        for (const id of keep) {
          results.push(await (async () => {
            if (!(await ctx.files.ofOrg(principal.orgId, id))) return { keep_file_id: id, group_id: null, status: "not_found" as const, trashed_file_ids: [], failed: [] };
            const group = groups.find((g) => g.memberIds.includes(id));
            if (!group) return { keep_file_id: id, group_id: null, status: "no_group" as const, trashed_file_ids: [], failed: [] };
            // A file another entry keeps is never trashed by this one.
            const others = group.memberIds.filter((m) => m !== id && !keep.includes(m));
            const outcome = others.length ? await batchDeleteFiles(ctx, principal.orgId, others) : { deleted: [], failed: [] };
            return {
              keep_file_id: id,
              group_id: group.id,
              status: "trashed" as const,
              trashed_file_ids: outcome.deleted.map((d) => d.id),
              failed: outcome.failed.map((f) => ({ id: f.id, message: f.message })),
            };
          })());
        }
        return { groups: results, trashed_count: results.reduce((n, r) => n + r.trashed_file_ids.length, 0) };
      },
      {
        permission: "delete",
        body: t.Object({
          keep_file_ids: t.Array(Uuid("keep_file_ids"), { minItems: 1, maxItems: 100, error: "keep_file_ids: 1-100 file UUIDs" }),
        }),
        response: { 200: TrashResult, ...errorResponses([400]) },
        detail: {
          summary: "Keep one file of each named group and move the rest of the group to the trash (extension)",
          description:
            "keep_file_ids: for each, the other live members of its near-duplicate group are soft-deleted (restorable for 30 days, POST /files/{id}/restore). Usually the group's best_file_id; any member may be kept. Files named in keep_file_ids are never trashed. A file in no group is reported as no_group; an unknown one as not_found.",
        },
      },
    )
    .post(
      "/duplicates/not-duplicates",
      async ({ principal, body }) => {
        const ids = await liveFileIds(ctx, principal.orgId, body.file_ids);
        return { file_ids: ids, separated_pair_count: await dismissDuplicates(ctx.sql, principal.orgId, ids, isoAt(ctx.clock.now())) };
      },
      {
        permission: "edit",
        body: NotDuplicatesBody,
        response: {
          200: t.Object({
            file_ids: t.Array(t.String()),
            separated_pair_count: t.Integer({ description: "Near-duplicate pairs found among them that no longer group them" }),
          }),
          ...errorResponses([400, 404]),
        },
        detail: {
          summary: "Say that files are not copies of one another: no two of them are grouped again (extension)",
          description:
            "file_ids: 2-100 live files of the organization (usually a group's files). Every pair among them leaves GET /duplicates/groups for good, also after the files are analysed again. 404 FILE_NOT_FOUND when one is not a live file of the organization (nothing is recorded then).",
        },
      },
    )
    .post(
      "/duplicates/not-duplicates/undo",
      async ({ principal, body }) => {
        const ids = await liveFileIds(ctx, principal.orgId, body.file_ids);
        return { file_ids: ids, regrouped_pair_count: await undismissDuplicates(ctx.sql, principal.orgId, ids) };
      },
      {
        permission: "edit",
        body: NotDuplicatesBody,
        response: {
          200: t.Object({
            file_ids: t.Array(t.String()),
            regrouped_pair_count: t.Integer({ description: "Near-duplicate pairs among them that group them again" }),
          }),
          ...errorResponses([400, 404]),
        },
        detail: {
          summary: "Take back \"not duplicates\": the files may be grouped again (extension)",
          description:
            "file_ids: 2-100 live files of the organization, as sent to POST /duplicates/not-duplicates. Every verdict between two of them is removed; their near-duplicate pairs group them again in GET /duplicates/groups. 404 FILE_NOT_FOUND when one is not a live file of the organization (nothing is changed then).",
        },
      },
    );
}
