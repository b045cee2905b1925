/**
 * Loaded before every test file (bunfig.toml [test] preload). Bun 1.4.5 ignores `[test] timeout`
 * in bunfig.toml, so the default timeout is set here: tests start real servers and processes, and
 * on a busy 2-core machine a 5 s default fails them. Tests that wait do so on conditions with
 * deadlines; this timeout only bounds a test that hangs.
 */
import { setDefaultTimeout } from "bun:test";

setDefaultTimeout(90_000);
