/** Loaded before every test file (bunfig.toml): hooks here run once for the whole run. */
import { afterAll } from "bun:test";
import { stopSuiteDatabase } from "./suite-database.ts";
import { removeTempDirs } from "./temp-dir.ts";

afterAll(async () => {
  await stopSuiteDatabase();
  removeTempDirs();
});
