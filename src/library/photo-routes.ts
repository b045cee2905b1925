/** HTTP binding of the library by time and place (extensions): GET /files/timeline and GET /files/locations. */
import { Elysia, t } from "elysia";
import type { LibraryDeps } from "./deps.ts";
import { permissions } from "../http/permissions.ts";
import { querySyntax } from "../http/validation.ts";
import { OneOf, errorResponses } from "../http/shapes.ts";
import { filterParams, FILTER_REPEATABLE, fileFiltersOf } from "./model.ts";
import { locationClusters, MAX_ZOOM } from "./map-clusters.ts";
import { GRANULARITIES, timeline } from "./timeline.ts";

const FILTERS_TEXT = "Filters as GET /files: media_types, ids, folder_id, project_id, has_description, compliance_status, processing_status, date_from, date_to, taken_from, taken_to, camera, has_location, bbox.";

const TimelineBody = t.Object(
  {
    granularity: OneOf(GRANULARITIES),
    buckets: t.Array(
      t.Object({
        key: t.String({ description: "\"2021\", \"2021-06\" or \"2021-06-01\" (UTC)" }),
        count: t.Integer(),
        start: t.String({ format: "date-time", description: "Inclusive: GET /files?taken_from=start" }),
        end: t.String({ format: "date-time", description: "Exclusive: GET /files?taken_to= just before it" }),
      }),
    ),
    dated_count: t.Integer({ description: "Files in the buckets" }),
    undated_count: t.Integer({ description: "Files matching the filters with no content_created_at" }),
  },
  { title: "Timeline" },
);

const LocationsBody = t.Object(
  {
    zoom: t.Integer(),
    clusters: t.Array(
      t.Object({
        latitude: t.Number({ description: "Centroid of the cluster's points" }),
        longitude: t.Number(),
        count: t.Integer(),
        bbox: t.Array(t.Number(), { minItems: 4, maxItems: 4, description: "west, south, east, north of its points (zoom to it to split it)" }),
        file_ids: t.Array(t.String({ format: "uuid" }), { description: "Up to four of its files, newest first" }),
      }),
    ),
    located_count: t.Integer({ description: "Located files matching the filters" }),
    truncated: t.Boolean({ description: "More clusters than limit: the largest were kept" }),
  },
  { title: "LocationClusters" },
);

export function photoLibraryRoutes(ctx: LibraryDeps) {
  return new Elysia({ tags: ["Files"] })
    .use(permissions)
    .get(
      "/files/timeline",
      async ({ principal, query }) => {
        const result = await timeline(ctx.sql, principal.orgId, fileFiltersOf(query), query.granularity ?? "month", query.order === "asc" ? "asc" : "desc");
        return { granularity: result.granularity, buckets: result.buckets, dated_count: result.datedCount, undated_count: result.undatedCount };
      },
      {
        permission: "view",
        transform: querySyntax(FILTER_REPEATABLE),
        query: t.Object({
          ...filterParams(ctx.kinds.types()),
          granularity: t.Optional(OneOf(GRANULARITIES)),
          order: t.Optional(OneOf(["asc", "desc"] as const)),
        }),
        response: { 200: TimelineBody, ...errorResponses([400]) },
        detail: {
          summary: "Counts of files by when they were taken, per UTC month, day or year (extension)",
          description: `granularity: month (default), day or year, on content_created_at in UTC; order: desc (default, newest first) or asc. ${FILTERS_TEXT}`,
        },
      },
    )
    .get(
      "/files/locations",
      async ({ principal, query }) => {
        const result = await locationClusters(ctx.sql, principal.orgId, fileFiltersOf(query), { zoom: query.zoom ?? 0, limit: query.limit ?? 500 });
        return {
          zoom: result.zoom,
          clusters: result.clusters.map((c) => ({ latitude: c.latitude, longitude: c.longitude, count: c.count, bbox: c.bbox, file_ids: c.fileIds })),
          located_count: result.locatedCount,
          truncated: result.truncated,
        };
      },
      {
        permission: "view",
        transform: querySyntax(FILTER_REPEATABLE),
        query: t.Object({
          ...filterParams(ctx.kinds.types()),
          zoom: t.Optional(t.Integer({ minimum: 0, maximum: MAX_ZOOM, error: `zoom: an integer from 0 to ${MAX_ZOOM}`, description: "The map's zoom level (Web Mercator tiles); clusters are cells of 64 px at it" })),
          limit: t.Optional(t.Integer({ minimum: 1, maximum: 5000, error: "limit: an integer from 1 to 5000", description: "Clusters at most (default 500), the largest kept" })),
        }),
        response: { 200: LocationsBody, ...errorResponses([400]) },
        detail: {
          summary: "Where files were taken, clustered for a map at a zoom level (extension)",
          description: `zoom 0-${MAX_ZOOM} (default 0); bbox is the viewport (west,south,east,north). ${FILTERS_TEXT}`,
        },
      },
    );
}
