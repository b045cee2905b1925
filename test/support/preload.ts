/** Loaded before every test file (bunfig.toml): hooks here run once for the whole run. */
import { afterAll } from "bun:test";
import { removeTempDirs } from "./temp-dir.ts";

afterAll(removeTempDirs);
