/**
 * A small map of one place (a photo's): the offline world map around it at a country's scale,
 * a marker on the spot, a link to the Map page there.
 */
import { project, WORLD, WorldOutlines } from "./world-map.tsx";

const WIDTH = 320;
const HEIGHT = 180;
/** Zoom 4: about 2,500 km across the map at the equator. */
const ZOOM = 4;

export function MiniMap({ latitude, longitude, label }: { latitude: number; longitude: number; label: string }) {
  const [x, y] = project(longitude, latitude);
  const s = 2 ** ZOOM;
  const w = WIDTH / s;
  const h = HEIGHT / s;
  // The view stays within the world; the marker is where the point is.
  const left = Math.max(0, Math.min(WORLD - w, x - w / 2));
  const top = Math.max(0, Math.min(WORLD - h, y - h / 2));
  return (
    <a class="mini-map" href={`#/map/@${latitude.toFixed(5)},${longitude.toFixed(5)},13`} aria-label={`${label}: open on the map`}>
      <svg class="world-map" viewBox={`${left} ${top} ${w} ${h}`} width={WIDTH} height={HEIGHT} role="img" aria-label={`Map of ${label}`}>
        <WorldOutlines scale={s} />
        <g class="cluster chosen" transform={`translate(${x} ${y})`}>
          <circle r={7 / s} stroke-width={2 / s} />
        </g>
      </svg>
    </a>
  );
}
