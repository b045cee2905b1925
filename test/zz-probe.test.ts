import { test } from "bun:test";
import { readFileSync } from "node:fs";
import { VisionModels } from "../src/images/vision.ts";
test("probe", async () => {
  const vision = new VisionModels({ modelsDir: "/tmp/crowd/models" });
  for (const f of (process.env.FILES ?? "").split(",")) {
    const img = readFileSync(f);
    for (const tiles of [false, true]) {
      const t = performance.now();
      const r = await vision.analyze(img, { tiles });
      console.log(f, tiles, "faces", r.faces, "people", r.people, Math.round(performance.now() - t), "ms");
    }
  }
  await vision.close();
}, 600_000);
