/** The Map page's scale bar: a round distance that fits, at the latitude of the view's centre. */
import { expect, test } from "bun:test";
import { scaleBar } from "../src/dashboard/web/map-page.tsx";
import { project, WORLD } from "../src/dashboard/web/world-map.tsx";

test("the scale bar is a round distance (1, 2 or 5 × 10^n) between 24 and 120 px long at every zoom", () => {
  // Zoom 0 on the equator: 156.5 km a pixel, so 120 px are 18,785 km: the bar says 10,000 km in 64 px.
  const equator = scaleBar({ x: WORLD / 2, y: WORLD / 2, z: 0 });
  expect(equator.label).toBe("10000 km");
  expect(equator.px).toBeCloseTo(63.9, 1);
  // Paris at zoom 14: 6.3 m a pixel; 120 px are 755 m: 500 m in 79 px.
  const [x, y] = project(2.35, 48.86);
  const paris = scaleBar({ x, y, z: 14 });
  expect(paris.label).toBe("500 m");
  expect(paris.px).toBeGreaterThan(60);
  expect(paris.px).toBeLessThanOrEqual(120);
  for (let z = 0; z <= 18; z += 0.5) {
    const bar = scaleBar({ x, y, z });
    expect(bar.px).toBeLessThanOrEqual(120);
    expect(bar.px).toBeGreaterThan(120 / 5 - 1);
    expect(bar.label).toMatch(/^[125]0*(\.\d+)? k?m$/);
  }
});
