/**
 * The offline world map the Map page and a photo's info draw on: Natural Earth's 1:110m countries
 * (npm `world-atlas`, public domain data, ISC package) projected once with d3-geo into Web
 * Mercator "world units" (0-256 each way, zoom 0's single tile, as GET /files/locations counts
 * zoom), as SVG paths. Nothing is fetched: the outlines are in this script chunk, loaded only by
 * the pages that draw a map.
 */
import { geoMercator, geoPath } from "d3-geo";
import { feature, mesh } from "topojson-client";
import type { GeometryCollection, Topology } from "topojson-specification";
import countries from "world-atlas/countries-110m.json";

/** The world's side in world units (zoom 0's tile). */
export const WORLD = 256;
/** Web Mercator's latitude limit. */
const MAX_LATITUDE = 85.05112878;

const projection = geoMercator()
  .scale(WORLD / (2 * Math.PI))
  .translate([WORLD / 2, WORLD / 2])
  .clipExtent([
    [0, 0],
    [WORLD, WORLD],
  ]);

let outlines: { land: string; borders: string } | null = null;

/** The land and the borders between countries as SVG path data in world units, projected once. */
export function worldOutlines(): { land: string; borders: string } {
  if (outlines) return outlines;
  const topology = countries as unknown as Topology<{ countries: GeometryCollection; land: GeometryCollection }>;
  const path = geoPath(projection).digits(3);
  outlines = {
    land: path(feature(topology, topology.objects.land)) ?? "",
    borders: path(mesh(topology, topology.objects.countries, (a, b) => a !== b)) ?? "",
  };
  return outlines;
}

/** A point's place on the map, in world units. */
export function project(longitude: number, latitude: number): [number, number] {
  const lat = Math.max(-MAX_LATITUDE, Math.min(MAX_LATITUDE, latitude));
  const x = ((longitude + 180) / 360) * WORLD;
  const sin = Math.sin((lat * Math.PI) / 180);
  const y = (0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * WORLD;
  return [x, y];
}

/** The longitude and latitude at a place on the map. */
export function unproject(x: number, y: number): [number, number] {
  const longitude = (x / WORLD) * 360 - 180;
  const n = Math.PI - (2 * Math.PI * y) / WORLD;
  const latitude = (180 / Math.PI) * Math.atan(Math.sinh(n));
  return [longitude, latitude];
}

/** The land and borders, for an <svg> whose viewBox is in world units. `scale`: screen pixels per world unit (keeps lines one pixel wide). */
export function WorldOutlines({ scale }: { scale: number }) {
  const { land, borders } = worldOutlines();
  return (
    <g aria-hidden="true">
      <rect x={0} y={0} width={WORLD} height={WORLD} class="sea" />
      <path d={land} class="land" />
      <path d={borders} class="borders" fill="none" stroke-width={0.8 / scale} />
    </g>
  );
}
