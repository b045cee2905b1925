/**
 * Request shapes Elysia's route validation does not see, checked with the same TypeBox schemas
 * and answered with the same message (`invalid <where>: <field>: <rule>`, 400
 * VALIDATION_ERROR): the text fields of a multipart upload, which are collected while the body
 * streams to disk (the route parses nothing itself), and values a domain function is handed
 * from code rather than from a route.
 */
import type { Static, TObject, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { describeValidation, type ValidationIssue } from "./errors.ts";

/** The value, typed by the schema; 400 naming every offending field otherwise. */
export function checkShape<T extends TSchema>(schema: T, value: unknown, where: string): Static<T> {
  if (Value.Check(schema, value)) return value as Static<T>;
  const issues = [...Value.Errors(schema, value)] as unknown as ValidationIssue[];
  throw new ApiError("VALIDATION_ERROR", describeValidation({ type: where, all: issues }));
}

/**
 * Query-string syntax, settled before a route's query schema sees the values (the route's
 * `transform`): each parameter named in `repeatable` may be repeated (`tags=a&tags=b`),
 * bracketed (`tags[]=a`) or comma-separated (`tags=a,b`), its items trimmed and blanks dropped;
 * any parameter left empty (`sort_by=`) is absent, and a repeated single-valued one keeps its
 * first value.
 */
export function querySyntax(repeatable: readonly string[]) {
  return ({ query, request }: { query: Record<string, unknown>; request: Request }): void => {
    const params = new URL(request.url).searchParams;
    for (const name of Object.keys(query)) {
      const value = params.get(name);
      if (value === null || value === "") delete query[name];
      else query[name] = value;
    }
    for (const name of repeatable) {
      delete query[`${name}[]`];
      const items = [...params.getAll(name), ...params.getAll(`${name}[]`)]
        .flatMap((v) => v.split(","))
        .map((v) => v.trim())
        .filter(Boolean);
      if (items.length > 0) query[name] = items;
      else delete query[name];
    }
  };
}

/**
 * Refuses fields an object schema does not name, for the bodies where a misspelt field must not
 * be ignored (the app's normalization otherwise drops unknown fields before validation). As a
 * route's `transform`, it sees the body as sent.
 */
export function refuseUnknownFields(schema: TObject) {
  const known = Object.keys(schema.properties);
  return ({ body }: { body: unknown }): void => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) return; // the schema refuses it
    const unknown = Object.keys(body).filter((key) => !known.includes(key));
    if (unknown.length === 0) return;
    const lines = unknown.slice(0, 20).map((key) => `${key}: unknown field; expected ${known.join(", ")}`);
    throw new ApiError("VALIDATION_ERROR", `invalid body: ${lines.join("; ")}`);
  };
}

/**
 * Route option `knownFieldsOnly: schema`: the body's unknown fields are refused (see
 * refuseUnknownFields). Write it after `permission` in the route's options: macros add their
 * transforms in that order, so a caller without the permission still gets 403 before any word
 * about the body (test/auth.test.ts checks it).
 */
export const knownFieldsOnly = new Elysia({ name: "mediabox-known-fields" }).macro({
  knownFieldsOnly: (schema: TObject) => ({ transform: refuseUnknownFields(schema) }),
});

const FORM_TRUE = new Set(["true", "1", "yes", "on"]);
const FORM_FALSE = new Set(["false", "0", "no", "off"]);

/**
 * Multipart text fields, checked against an object schema. Form fields are text: an empty field
 * counts as absent, and a field the schema declares boolean or integer is read the way forms
 * write them (true/false, 1/0, yes/no, on/off in any case; a whole number) before the check, so
 * the schema states the field's real type. Fields the schema does not name are ignored.
 */
export function checkForm<T extends TObject>(schema: T, fields: Record<string, string>): Static<T> {
  const values: Record<string, unknown> = {};
  for (const [name, text] of Object.entries(fields)) {
    if (text === "") continue;
    const type = (schema.properties[name] as { type?: unknown } | undefined)?.type;
    values[name] = type === "boolean" ? formBoolean(text) : type === "integer" ? formInteger(text) : text;
  }
  return checkShape(schema, values, "form");
}

function formBoolean(text: string): boolean | string {
  const word = text.trim().toLowerCase();
  return FORM_TRUE.has(word) ? true : FORM_FALSE.has(word) ? false : text;
}

function formInteger(text: string): number | string {
  const n = text.trim() === "" ? NaN : Number(text);
  return Number.isInteger(n) ? n : text;
}
