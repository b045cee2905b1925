/**
 * Points for a map (`GET /files/locations`): the located files under the same filters as
 * GET /files, clustered server-side on a grid of the Web Mercator tiles of a zoom level (cells of
 * 64 screen pixels: 4 × 4 per 256-pixel tile), so a client draws at most one marker per cell
 * whatever the library's size. Each cluster has its centroid, its count, the box around its
 * points and its newest files (for thumbnails).
 */
import type { SqlClient } from "../db/sql-client.ts";
import { boxCondition, fileConditions, type FileFilters } from "../files/queries.ts";

export const MAX_ZOOM = 22;
/** Cells per tile side: 64-pixel cells on 256-pixel tiles. */
const CELLS_PER_TILE = 4;
/** Newest files named per cluster. */
const SAMPLES = 4;

export interface LocationCluster {
  latitude: number;
  longitude: number;
  count: number;
  /** west, south, east, north of the cluster's points. */
  bbox: [number, number, number, number];
  /** Up to four of its files, newest (by content_created_at) first. */
  fileIds: string[];
}

export interface LocationClusters {
  zoom: number;
  clusters: LocationCluster[];
  /** Located files matching the filters (within the box). */
  locatedCount: number;
  /** True when there were more clusters than `limit` (the largest were kept). */
  truncated: boolean;
}

/** Web Mercator: the cell of a point at `cells` cells per world side. */
function cellOf(latitude: number, longitude: number, cells: number): number {
  const lat = Math.max(-85.05112878, Math.min(85.05112878, latitude));
  const x = Math.min(cells - 1, Math.floor(((longitude + 180) / 360) * cells));
  const sin = Math.sin((lat * Math.PI) / 180);
  const y = Math.min(cells - 1, Math.max(0, Math.floor((0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * cells)));
  return y * cells + x;
}

interface Acc {
  latSum: number;
  lonSum: number;
  count: number;
  west: number;
  south: number;
  east: number;
  north: number;
  fileIds: string[];
}

/** The filters' `bbox` is the viewport: only points within it are clustered. */
export async function locationClusters(db: SqlClient, orgId: string, filters: FileFilters, options: { zoom: number; limit: number }): Promise<LocationClusters> {
  const { bbox, ...rest } = filters;
  const { filters: conditions, params } = fileConditions(db.dialect, { ...rest, bbox: null });
  const box = bbox ? boxCondition(bbox) : null;
  const where = ["c.org_id = ?", "c.latitude IS NOT NULL", ...(box ? [box.sql] : []), "f.deleted_at IS NULL", ...conditions].join(" AND ");
  const cells = 2 ** options.zoom * CELLS_PER_TILE;
  const clusters = new Map<number, Acc>();
  // Newest first (undated last, as SQLite sorts NULL), so each cluster's first files are its newest.
  // Three numbers a point: 100,000 located files are a few megabytes read at once.
  const rows = await db.all<{ id: string; latitude: number; longitude: number }>(
    `SELECT f.id, c.latitude, c.longitude FROM camera_facts c JOIN files f ON f.id = c.file_id WHERE ${where} ORDER BY f.content_created_at DESC NULLS LAST, f.id DESC`,
    [orgId, ...(box?.params ?? []), ...params],
  );
  let located = 0;
  for (const row of rows) {
    located++;
    const key = cellOf(row.latitude, row.longitude, cells);
    let acc = clusters.get(key);
    if (!acc) clusters.set(key, (acc = { latSum: 0, lonSum: 0, count: 0, west: row.longitude, south: row.latitude, east: row.longitude, north: row.latitude, fileIds: [] }));
    acc.latSum += row.latitude;
    acc.lonSum += row.longitude;
    acc.count++;
    acc.west = Math.min(acc.west, row.longitude);
    acc.east = Math.max(acc.east, row.longitude);
    acc.south = Math.min(acc.south, row.latitude);
    acc.north = Math.max(acc.north, row.latitude);
    if (acc.fileIds.length < SAMPLES) acc.fileIds.push(row.id);
  }
  const round = (n: number) => Math.round(n * 1e6) / 1e6;
  const all = [...clusters.values()]
    .sort((a, b) => b.count - a.count)
    .map((acc) => ({
      latitude: round(acc.latSum / acc.count),
      longitude: round(acc.lonSum / acc.count),
      count: acc.count,
      bbox: [acc.west, acc.south, acc.east, acc.north] as [number, number, number, number],
      fileIds: acc.fileIds,
    }));
  return { zoom: options.zoom, clusters: all.slice(0, options.limit), locatedCount: located, truncated: all.length > options.limit };
}
