/**
 * Request shapes Elysia's route validation does not see, checked with the same TypeBox schemas
 * and answered with the same message (`invalid <where>: <field>: <rule>`, 400
 * VALIDATION_ERROR): the text fields of a multipart upload, which are collected while the body
 * streams to disk (the route parses nothing itself), and values a domain function is handed
 * from code rather than from a route.
 */
import type { Static, TObject, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ApiError } from "../errors.ts";
import { describeValidation, type ValidationIssue } from "./errors.ts";

/** The value, typed by the schema; 400 naming every offending field otherwise. */
export function checkShape<T extends TSchema>(schema: T, value: unknown, where: string): Static<T> {
  if (Value.Check(schema, value)) return value as Static<T>;
  const issues = [...Value.Errors(schema, value)] as unknown as ValidationIssue[];
  throw new ApiError("VALIDATION_ERROR", describeValidation({ type: where, all: issues }));
}

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
