/** Loaded before every test file (bunfig.toml): hooks here run once for the whole run. */
import { afterAll } from "bun:test";
import { serversLeftOpen } from "./server.ts";
import { stopSuiteDatabase } from "./suite-database.ts";
import { removeTempDirs } from "./temp-dir.ts";

afterAll(async () => {
  const leftOpen = serversLeftOpen();
  if (leftOpen.length) console.warn(`test servers never closed (${leftOpen.length}): ${[...new Set(leftOpen)].map((f) => `${f} x${leftOpen.filter((g) => g === f).length}`).join(", ")}`);
  await stopSuiteDatabase();
  removeTempDirs();
});
