/** HTTP binding of people (extensions): the people faces were clustered into, their files, names, merges, and same-person search. */
import { Elysia, t } from "elysia";
import type { LibraryDeps } from "./deps.ts";
import { badRequest } from "../errors.ts";
import { permissions } from "../http/permissions.ts";
import { publicOrigin } from "../http/request-context.ts";
import { Enum, Nullable, Page, page, pageQuery, Uuid, errorResponses } from "../http/shapes.ts";
import { enqueueClustering } from "../people/people-jobs.ts";
import { assignFace, facesOfFile, getPerson, listPeople, mergePeople, personFaces, personFileIds, similarFaces, updatePerson, type FaceView, type Person } from "../people/people.ts";
import { fileShapes, FileParams } from "../files/file-shapes.ts";
import { fileSummaries } from "./file-views.ts";
import { FileUrls } from "../files/file-urls.ts";

const Box = t.Object({ x_min: t.Number(), y_min: t.Number(), x_max: t.Number(), y_max: t.Number() }, { description: "Normalized 0-1 of the image" });

const PersonView = t.Object(
  {
    id: t.String({ format: "uuid" }),
    name: Nullable(t.String()),
    hidden: t.Boolean(),
    face_count: t.Integer({ description: "Faces in live files" }),
    file_count: t.Integer({ description: "Live files showing the person" }),
    cover: Nullable(
      t.Object({
        face_id: t.String({ format: "uuid" }),
        file_id: t.String({ format: "uuid" }),
        box: Box,
        thumbnail_url: Nullable(t.String({ description: "The cover file's small_256 variant (signed, 1 hour); crop it to box" })),
      }),
    ),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { title: "Person" },
);

const FaceView = t.Object(
  {
    id: t.String({ format: "uuid" }),
    file_id: t.String({ format: "uuid" }),
    person_id: Nullable(t.String({ format: "uuid", description: "Null until the face is clustered" })),
    person_name: Nullable(t.String()),
    box: Box,
    score: t.Number({ description: "Detection confidence 0-1" }),
  },
  { title: "Face" },
);

const PersonFaceView = t.Composite(
  [
    FaceView,
    t.Object({
      filename: t.String(),
      thumbnail_url: Nullable(t.String({ description: "The file's small_256 variant (signed, 1 hour); crop it to box" })),
    }),
  ],
  { title: "PersonFace" },
);

const PersonParams = t.Object({ person_id: Uuid("person_id") });

async function personView(ctx: LibraryDeps, urls: FileUrls, person: Person) {
  let cover = null;
  if (person.cover) {
    const row = await ctx.files.byId(person.cover.fileId);
    const variants = row ? await urls.variants(row) : {};
    cover = { face_id: person.cover.faceId, file_id: person.cover.fileId, box: person.cover.box, thumbnail_url: variants.small_256 ?? null };
  }
  return {
    id: person.id,
    name: person.name,
    hidden: person.hidden,
    face_count: person.faceCount,
    file_count: person.fileCount,
    cover,
    created_at: person.createdAt,
    updated_at: person.updatedAt,
  };
}

const faceView = (f: FaceView) => ({ id: f.id, file_id: f.fileId, person_id: f.personId, person_name: f.personName, box: f.box, score: f.score });

export function peopleRoutes(ctx: LibraryDeps) {
  const urlsOf = (request: Request) => new FileUrls(ctx, publicOrigin(ctx.config, request));
  return new Elysia({ tags: ["People"] })
    .use(permissions)
    .get(
      "/people",
      async ({ principal, query, request }) => {
        const { people, total } = await listPeople(ctx.sql, principal.orgId, { includeHidden: query.include_hidden === "true", limit: query.limit, offset: query.offset });
        const urls = urlsOf(request);
        return page(await Promise.all(people.map((p) => personView(ctx, urls, p))), total, query.limit, query.offset);
      },
      {
        permission: "view",
        query: t.Object({ include_hidden: t.Optional(Enum(["true", "false"], { error: "include_hidden: must be true or false" })), ...pageQuery(100, 20) }),
        response: { 200: Page(PersonView), ...errorResponses([400]) },
        detail: {
          summary: "The people the organization's faces were clustered into (extension)",
          description: "Named people first (by name), then by how many files show them. Hidden people only with include_hidden=true. Query: limit (1-100, default 20), offset.",
        },
      },
    )
    .post(
      "/people/recluster",
      async ({ principal, set }) => {
        set.status = 202;
        return { job_id: await enqueueClustering(ctx, principal.orgId, 0), message: "faces without a person are being clustered" };
      },
      {
        permission: "edit",
        response: { 202: t.Object({ job_id: t.String(), message: t.String() }), ...errorResponses([]) },
        detail: {
          summary: "Cluster the faces that have no person yet, now (extension)",
          description: "The same job that runs a few seconds after new faces are stored; faces already given a person are never moved. GET /job/{job_id} follows it.",
        },
      },
    )
    .get("/people/:person_id", async ({ principal, params, request }) => personView(ctx, urlsOf(request), await getPerson(ctx.sql, principal.orgId, params.person_id)), {
      permission: "view",
      params: PersonParams,
      response: { 200: PersonView, ...errorResponses([400, 404]) },
      detail: { summary: "A person (extension)" },
    })
    .get(
      "/people/:person_id/files",
      async ({ principal, params, query, request }) => {
        const { ids, total } = await personFileIds(ctx.sql, principal.orgId, params.person_id, query.limit, query.offset);
        const urls = urlsOf(request);
        const rows = await Promise.all(ids.map(async (id) => (await ctx.files.byId(id))!));
        const items = await fileSummaries(ctx.kinds, rows, urls);
        return page(items, total, query.limit, query.offset);
      },
      {
        permission: "view",
        params: PersonParams,
        query: t.Object(pageQuery(100, 20)),
        response: { 200: Page(fileShapes(ctx.kinds.all()).FileSummary), ...errorResponses([400, 404]) },
        detail: { summary: "The live files showing a person, newest taken first (file summaries as GET /files) (extension)" },
      },
    )
    .get(
      "/people/:person_id/faces",
      async ({ principal, params, query, request }) => {
        const { faces, total } = await personFaces(ctx.sql, principal.orgId, params.person_id, query.limit, query.offset);
        const urls = urlsOf(request);
        const items = await Promise.all(
          faces.map(async (f) => {
            const row = await ctx.files.byId(f.fileId);
            const variants = row ? await urls.variants(row) : {};
            return { ...faceView(f), filename: f.filename, thumbnail_url: variants.small_256 ?? null };
          }),
        );
        return page(items, total, query.limit, query.offset);
      },
      {
        permission: "view",
        params: PersonParams,
        query: t.Object(pageQuery(100, 20)),
        response: { 200: Page(PersonFaceView), ...errorResponses([400, 404]) },
        detail: { summary: "A person's faces in live files, newest taken first, with their file's thumbnail to crop (extension)" },
      },
    )
    .patch(
      "/people/:person_id",
      async ({ principal, params, body, request }) => {
        if (body.name === undefined && body.hidden === undefined) throw badRequest("give name or hidden");
        return personView(ctx, urlsOf(request), await updatePerson(ctx, principal.orgId, params.person_id, body));
      },
      {
        permission: "edit",
        params: PersonParams,
        body: t.Object({
          name: t.Optional(Nullable(t.String({ maxLength: 200, error: "name: at most 200 characters" }))),
          hidden: t.Optional(t.Boolean({ error: "hidden: must be a boolean" })),
        }),
        response: { 200: PersonView, ...errorResponses([400, 404]) },
        detail: { summary: "Rename a person (null or blank clears the name) or hide them from GET /people (extension)" },
      },
    )
    .post(
      "/people/:person_id/merge",
      async ({ principal, params, body, request }) => {
        const ids = body.person_ids.map((id) => id.toLowerCase());
        if (new Set(ids).size !== ids.length) throw badRequest("person_ids: must be unique");
        return personView(ctx, urlsOf(request), await mergePeople(ctx, principal.orgId, params.person_id, ids));
      },
      {
        permission: "edit",
        params: PersonParams,
        body: t.Object({ person_ids: t.Array(Uuid("person_ids"), { minItems: 1, maxItems: 100, error: "person_ids: 1-100 person UUIDs" }) }),
        response: { 200: PersonView, ...errorResponses([400, 404]) },
        detail: {
          summary: "Merge people into this one: their faces become this person's and they are removed (extension)",
          description: "The person keeps its name, or takes the first merged person's name when it has none. 404 when any id is not a person of the organization (nothing is merged then).",
        },
      },
    )
    .get("/files/:file_id/faces", async ({ principal, params }) => ({ faces: (await facesOfFile(ctx.sql, (await ctx.files.find(principal.orgId, params.file_id)).id)).map(faceView) }), {
      permission: "view",
      params: FileParams,
      response: { 200: t.Object({ faces: t.Array(FaceView) }), ...errorResponses([400, 404, 409]) },
      detail: { summary: "The recognizable faces found in a file, with their person, largest first (extension)" },
    })
    .patch("/faces/:face_id", async ({ principal, params, body }) => faceView(await assignFace(ctx, principal.orgId, params.face_id, body.person_id === null ? null : body.person_id)), {
      permission: "edit",
      params: t.Object({ face_id: Uuid("face_id") }),
      body: t.Object({ person_id: Nullable(Uuid("person_id")) }, { error: "person_id: a person UUID, or null for \"not this person\"" }),
      response: { 200: FaceView, ...errorResponses([400, 404]) },
      detail: {
        summary: "Give a face to another person, or to nobody: \"not this person\" (extension)",
        description:
          "person_id: a person of the organization (404 PERSON_NOT_FOUND otherwise), or null to take the face from its person. A face taken from its person stays without one: clustering only makes new people of such faces. Analysing the file again finds its faces afresh.",
      },
    })
    .get(
      "/faces/:face_id/similar",
      async ({ principal, params, query }) => ({
        items: (await similarFaces(ctx, principal.orgId, params.face_id, query.limit ?? 20)).map((f) => ({ ...faceView(f), similarity: f.similarity })),
      }),
      {
        permission: "view",
        params: t.Object({ face_id: Uuid("face_id") }),
        query: t.Object({ limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, error: "limit: an integer from 1 to 100" })) }),
        response: { 200: t.Object({ items: t.Array(t.Composite([FaceView, t.Object({ similarity: t.Number({ description: "Cosine of the face embeddings" }) })])) }), ...errorResponses([400, 404]) },
        detail: {
          summary: "Same-person search: faces in other files most like this one, whoever they were clustered into (extension)",
          description: "Down to the same-person threshold, most similar first; limit 1-100 (default 20).",
        },
      },
    );
}
