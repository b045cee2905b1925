/**
 * The error catalogue (src/errors.ts) is the one place a code and its status are declared: the
 * docs/errors.md's table must be the one generated from it, the spec's codes keep the spec's statuses,
 * and every declared code is used.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ApiError, ClientDisconnectedError, ERRORS, forTenants, type ErrorCode } from "../src/errors.ts";
import { errorTable, ERROR_TABLE_PATH, documentedTable } from "../scripts/error-table.ts";

const codes = Object.keys(ERRORS) as ErrorCode[];

/** Every .ts file under src/, as text. */
function sources(dir = join(import.meta.dir, "..", "src")): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [readFileSync(path, "utf8")] : [];
  });
}

describe("error catalogue", () => {
  test("docs/errors.md's error table is the one generated from the catalogue (bun scripts/error-table.ts --write)", () => {
    const table = documentedTable(readFileSync(ERROR_TABLE_PATH, "utf8"));
    expect(table).not.toBeNull();
    expect(table!).toBe(errorTable());
  });

  test("every code has an HTTP status and a one-line meaning", () => {
    for (const code of codes) {
      const { status, meaning } = ERRORS[code];
      expect({ code, ok: Number.isInteger(status) && status >= 400 && status <= 599 }).toEqual({ code, ok: true });
      expect({ code, ok: meaning.length > 0 && !meaning.includes("\n") && !meaning.includes("|") }).toEqual({ code, ok: true });
    }
  });

  test("the codes the spec names keep the spec's statuses", () => {
    const spec: Record<string, number> = {
      PROJECT_NOT_FOUND: 404,
      PROJECT_NAME_EXISTS: 409,
      PROJECT_LIMIT_REACHED: 409,
      PROJECT_NOT_EMPTY: 409,
      BUSINESS_RULE_VIOLATION: 422,
      CUSTOM_SCHEMA_NAME_EXISTS: 400,
      CUSTOM_SCHEMA_INVALID_SCHEMA: 400,
      CUSTOM_SCHEMA_INVALID_NAME: 400,
      CUSTOM_SCHEMA_INVALID_DESCRIPTION: 400,
      CUSTOM_SCHEMA_INVALID_PROMPT_HINT: 400,
      CUSTOM_SCHEMA_NOT_FOUND: 404,
    };
    for (const [code, status] of Object.entries(spec)) expect({ code, status: ERRORS[code as ErrorCode]?.status as number | undefined }).toEqual({ code, status });
  });

  test("an ApiError takes its status from the catalogue", () => {
    const error = new ApiError("UPLOAD_BACKPRESSURE", "busy", { "retry-after": "2" });
    expect(error.status).toBe(429);
    expect(error.toBody()).toEqual({ detail: "busy", code: "UPLOAD_BACKPRESSURE" });
    expect(error.headers).toEqual({ "retry-after": "2" });
    expect(new ClientDisconnectedError().status).toBe(499);
    for (const code of codes) expect(new ApiError(code, "x").status).toBe(ERRORS[code].status);
  });

  test("every code in the catalogue is used somewhere in src/", () => {
    const text = sources().join("\n");
    const unused = codes.filter((code) => !text.includes(`"${code}"`));
    expect(unused).toEqual([]);
  });
});

describe("errors as tenants read them (forTenants)", () => {
  test("no stack, no absolute path or file: URI (the file's own name stays), no storage key; URLs and ratios untouched", () => {
    expect(forTenants("ffmpeg: file:/srv/data/blobs/objects/orgs/0a1b-22/files/9f8e-77/original: Invalid data found")).toBe("ffmpeg: the stored file: Invalid data found");
    expect(forTenants('model "clip" is incomplete: /srv/models/clip/onnx/model.onnx is missing (folder /srv/models/clip)')).toBe('model "clip" is incomplete: model.onnx is missing (folder clip)');
    expect(forTenants("Error: boom\n    at read (/app/src/x.ts:1:2)\n    at run (/app/src/y.ts:3:4)")).toBe("Error: boom");
    expect(forTenants("the page at https://example.com/a/b?c=/d answered 404")).toBe("the page at https://example.com/a/b?c=/d answered 404");
    expect(forTenants("3/4 of the pages, 1/2/3 dates")).toBe("3/4 of the pages, 1/2/3 dates");
    expect(forTenants("x".repeat(5_000)).length).toBe(1_000);
  });
});
