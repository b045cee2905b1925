/**
 * People counting: the tile and box geometry on its own, then the real detectors on composites
 * with known counts (test/support/crowd-fixtures.ts), a real portrait and a scene without people.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { VisionModels } from "../src/images/vision.ts";
import { countPeople, fromTile, mergeBoxes, planTiles, type Box } from "../src/images/people-count.ts";
import { crowdComposite, portrait, resizedCopy } from "./support/crowd-fixtures.ts";
import { photo } from "./support/images.ts";

const box = (x: number, y: number, w: number, h: number, score = 0.9): Box => ({ x, y, w, h, score });

describe("tile and box geometry", () => {
  test("tiles cover the image, overlap, and stay inside it", () => {
    const tiles = planTiles(1024, 768, 512);
    expect(tiles.length).toBe(6);
    for (const t of tiles) {
      expect(t.left + t.size).toBeLessThanOrEqual(1024);
      expect(t.top + t.size).toBeLessThanOrEqual(768);
    }
    // Every pixel lies in some tile.
    for (const [x, y] of [[0, 0], [1023, 767], [511, 383], [700, 10]]) {
      expect(tiles.some((t) => x! >= t.left && x! < t.left + t.size && y! >= t.top && y! < t.top + t.size)).toBe(true);
    }
    // Neighbours share at least a quarter of a tile.
    const lefts = [...new Set(tiles.map((t) => t.left))].sort((a, b) => a - b);
    for (let i = 1; i < lefts.length; i++) expect(lefts[i - 1]! + 512 - lefts[i]!).toBeGreaterThanOrEqual(128);
    expect(planTiles(500, 400, 512)).toEqual([]);
  });

  test("duplicates from overlapping tiles merge; neighbours and a small face inside a large one do not", () => {
    const tile = { left: 400, top: 0, size: 512 };
    const whole = box(420, 100, 60, 60, 0.95);
    const again = fromTile(box(22, 102, 58, 58, 0.9), tile); // the same face seen from the next tile
    const cut = box(420, 100, 30, 60, 0.6); // the same face cut in half by a tile edge
    const neighbour = box(490, 100, 60, 60, 0.8);
    const small = box(440, 120, 12, 12, 0.7);
    expect(mergeBoxes([again, cut, whole, neighbour, small])).toEqual([whole, neighbour, small]);
  });

  test("a body with its face is one person; bodies without faces and faces without bodies each count", () => {
    const faces = [box(40, 10, 20, 20), box(140, 10, 20, 20), box(400, 400, 30, 30)];
    const persons = [box(20, 0, 60, 200), box(120, 0, 60, 200), box(250, 0, 60, 200)];
    expect(countPeople(faces, persons)).toBe(4);
    expect(countPeople([], persons)).toBe(3);
    expect(countPeople(faces, [])).toBe(3);
  });

  test("in a crowd, overlapping bodies each take their own face", () => {
    // The wide box overlaps both faces; the narrow one only the second. Pairing by where a head
    // would sit gives each body one face, so two people, not three.
    const faces = [box(30, 10, 20, 20), box(110, 10, 20, 20)];
    const persons = [box(0, 0, 80, 200), box(20, 0, 130, 200)];
    expect(countPeople(faces, persons)).toBe(2);
  });
});

describe("counts on pictures with known people", () => {
  let modelsDir: string;
  let vision: VisionModels;
  beforeAll(async () => {
    modelsDir = await mkdtemp(path.join(tmpdir(), "mediabox-people-"));
    vision = new VisionModels({ modelsDir });
  });
  afterAll(async () => {
    await vision.close();
    await rm(modelsDir, { recursive: true, force: true });
  });

  // The seeds crowdFixtures() uses, so these are the pictures bench:people scores.
  for (const [people, background, seed] of [[8, "plain", 80], [8, "busy", 81], [15, "plain", 150], [15, "busy", 151]] as const) {
    test(`${people} people on a ${background} background, and a half-size copy: within 20 %`, async () => {
      const original = await crowdComposite(people, background, seed);
      for (const fixture of [original, await resizedCopy(original)]) {
        const r = await vision.analyze(fixture.image);
        // Named, so a failure says which copy missed.
        expect({ fixture: fixture.name, withinTolerance: Math.abs(r.people - people) <= people * 0.2, counted: r.people }).toMatchObject({ fixture: fixture.name, withinTolerance: true });
        expect(r.faces).toBeLessThanOrEqual(r.people);
      }
    });
  }

  test("a portrait stays one person", async () => {
    const r = await vision.analyze(await portrait());
    expect(r.people).toBe(1);
    expect(r.faces).toBe(1);
  });

  test("a large scene without people stays at none", async () => {
    const r = await vision.analyze(await photo(3, 1600, 1200));
    expect(r.people).toBe(0);
    expect(r.faces).toBe(0);
  });
});
