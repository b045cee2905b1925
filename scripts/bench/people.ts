/**
 * People: counting them (part 1) and clustering faces into people (part 2, people-clustering.ts).
 *
 *   bun scripts/bench/people.ts             (or: npm run bench:people)
 *   MEDIABOX_BENCH_ONLY=counting|clustering runs one part.
 *
 * Part 1, counting against known counts.
 * Fixtures: composites of real face and full-length person crops from @vladmandic/human's
 * sample images (test/support/crowd-fixtures.ts), 1, 3, 8, 15 and 30 people on a plain and a
 * busy background, each with a half-size copy, plus a real portrait (1) and a scene without
 * people (0). Every image is analyzed twice in the same run: the whole-image pass alone and with
 * the tiled second look. Three counts are scored: "before", the single pass's face count, which
 * is what descriptions said until now ("N people" was the face count); "single pass", faces and
 * person boxes combined without tiles; "after", combined with tiles (what analyze() reports).
 * Prints per-fixture truth vs counted, mean absolute percentage error, the share of fixtures
 * within +/-20 % and milliseconds per image.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VisionModels } from "../../src/images/vision.ts";
import { crowdFixtures, portrait, type CrowdFixture } from "../../test/support/crowd-fixtures.ts";
import { photo } from "../../test/support/images.ts";
import { clusteringBench } from "./people-clustering.ts";

const modelsDir = mkdtempSync(join(tmpdir(), "mediabox-bench-people-"));
const vision = new VisionModels({ modelsDir });

/** Part 1: counting people. */
async function countingBench(): Promise<void> {
  const fixtures: CrowdFixture[] = [
    { name: "portrait", people: 1, image: await portrait() },
    { name: "no people (synthetic landscape)", people: 0, image: await photo(3, 1600, 1200) },
    ...(await crowdFixtures()),
  ];

  // Loads the models and compiles the kernels, so the first fixture's time is not start-up.
  await vision.analyze(fixtures[0]!.image);

  interface Run { counted: number; ms: number }
  const rows: { fixture: CrowdFixture; before: Run; single: Run; after: Run }[] = [];
  const pad = (n: number) => String(n).padStart(3);
  for (const fixture of fixtures) {
    let started = performance.now();
    const single = await vision.analyze(fixture.image, { tiles: false });
    const singleMs = performance.now() - started;
    started = performance.now();
    const tiled = await vision.analyze(fixture.image);
    const row = {
      fixture,
      before: { counted: single.faces, ms: singleMs },
      single: { counted: single.people, ms: singleMs },
      after: { counted: tiled.people, ms: performance.now() - started },
    };
    rows.push(row);
    console.log(
      `${fixture.name.padEnd(34)} truth ${pad(fixture.people)}   before ${pad(row.before.counted)}   single pass ${pad(row.single.counted)} (${Math.round(singleMs)} ms)   after ${pad(row.after.counted)} (${Math.round(row.after.ms)} ms)`,
    );
  }

  // Percentage error is undefined for a true count of 0: that fixture is scored as exact or not.
  const error = (truth: number, counted: number) => (truth === 0 ? (counted === 0 ? 0 : 1) : Math.abs(counted - truth) / truth);
  function summary(label: string, pick: (r: (typeof rows)[number]) => Run) {
    const errors = rows.map((r) => error(r.fixture.people, pick(r).counted));
    const mape = (errors.reduce((a, b) => a + b, 0) / errors.length) * 100;
    const within = (errors.filter((e) => e <= 0.2).length / errors.length) * 100;
    const ms = rows.map((r) => pick(r).ms);
    const msCrowd = rows.filter((r) => r.fixture.people >= 8).map((r) => pick(r).ms);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(`${label.padEnd(22)} MAPE ${mape.toFixed(1)} %   within ±20 %: ${within.toFixed(0)} % (${errors.filter((e) => e <= 0.2).length}/${errors.length})   ms/image: mean ${Math.round(mean(ms))}, portrait ${Math.round(pick(rows[0]!).ms)}, 8+ people ${Math.round(mean(msCrowd))}`);
  }
  console.log("");
  summary("before (faces, 1 pass)", (r) => r.before);
  summary("single pass, combined", (r) => r.single);
  summary("after (tiled)", (r) => r.after);
}

const only = process.env.MEDIABOX_BENCH_ONLY;
if (only !== "clustering") await countingBench();
if (only !== "counting") await clusteringBench(vision);

await vision.close();
rmSync(modelsDir, { recursive: true, force: true });
// tfjs's wasm runtime keeps the event loop alive; the figures are printed, so leave.
process.exit(0);
