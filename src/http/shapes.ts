/**
 * Shared request/response schemas: the error body, ids, timestamps, and the one pagination
 * shape (`{items, total_count, limit, offset, has_more}`) with its query parameters.
 */
import { t, type TSchema } from "elysia";
import type { TLiteral } from "@sinclair/typebox";

export const ErrorBody = t.Object(
  { detail: t.String(), code: t.Optional(t.String()) },
  { description: "Error response" },
);

export const Uuid = (description?: string) =>
  t.String({ format: "uuid", error: `${description ?? "value"} must be a UUID`, ...(description ? { description } : {}) });

export const Timestamp = t.String({ format: "date-time" });
export const NullableTimestamp = t.Union([t.String({ format: "date-time" }), t.Null()]);

/**
 * The largest offset a listing takes (2^31 - 1). Every integer a client sends has an upper bound
 * in its schema, so none past what SQLite and JavaScript hold exactly reaches a query
 * (`offset=99999999999999999999` was a 500); test/architecture.test.ts checks the OpenAPI document.
 */
export const MAX_OFFSET = 2_147_483_647;

/** An integer query parameter whose validation message names the parameter and its range. */
export function queryInt(name: string, min: number, max: number, fallback: number) {
  return t.Integer({ minimum: min, maximum: max, default: fallback, error: `${name} must be an integer from ${min} to ${max}` });
}

export function pageQuery(maxLimit: number, defaultLimit: number) {
  return {
    limit: queryInt("limit", 1, maxLimit, defaultLimit),
    offset: queryInt("offset", 0, MAX_OFFSET, 0),
  };
}

export const Page = <T extends TSchema>(item: T) =>
  t.Object({
    items: t.Array(item),
    total_count: t.Integer(),
    limit: t.Integer(),
    offset: t.Integer(),
    has_more: t.Boolean(),
  });

export interface PageOf<T> {
  items: T[];
  total_count: number;
  limit: number;
  offset: number;
  has_more: boolean;
}

export function page<T>(items: T[], total: number, limit: number, offset: number): PageOf<T> {
  return { items, total_count: total, limit, offset, has_more: offset + items.length < total };
}

/** Statuses every authenticated route can answer: no or a bad key (401), a missing permission (403), a rate limit (429). */
const AUTH_STATUSES = [401, 403, 429] as const;

type ErrorResponses<S extends number> = { [K in S]: typeof ErrorBody };

/**
 * The error responses of a route, each the JSON error envelope (`{detail, code}`): `statuses`,
 * and the authentication ones unless the route is public (a signed download, the sign-in steps).
 * `response: { 200: Thing, ...errorResponses([400, 404]) }`.
 */
export function errorResponses<const S extends number = never>(statuses: readonly S[]): ErrorResponses<S | (typeof AUTH_STATUSES)[number]>;
export function errorResponses<const S extends number = never>(statuses: readonly S[], options: { public: true }): ErrorResponses<S>;
export function errorResponses(statuses: readonly number[], options: { public?: boolean } = {}): ErrorResponses<number> {
  const all = options.public ? statuses : [...statuses, ...AUTH_STATUSES];
  return Object.fromEntries(all.map((status) => [status, ErrorBody]));
}

/** `schema | null`, keeping the schema's own validation message. */
export const Nullable = <T extends TSchema>(schema: T) =>
  t.Union([schema, t.Null()], typeof schema.error === "string" ? { error: schema.error } : {});

/**
 * A string enum. Not `t.UnionEnum`: Elysia fills an absent optional UnionEnum with its first
 * value (a PATCH without project_type would reset it), while a union of literals stays absent.
 */
export const Enum = <const T extends readonly string[]>(values: T, options: { error?: string; description?: string } = {}) =>
  t.Union(
    values.map((v) => t.Literal(v)) as unknown as [TLiteral<T[number]>],
    options,
  );

/** `Enum` whose message lists the values; the validation message puts the field in front. */
export const OneOf = <const T extends readonly string[]>(values: T, description?: string) =>
  Enum(values, { error: `must be one of ${values.join(", ")}`, ...(description ? { description } : {}) });

/**
 * A UUID in either letter case, by pattern: unlike `format: "uuid"` it needs no format registry
 * (values checked outside a route) and refuses a "urn:uuid:" prefix. Its message names no field:
 * the validation message puts the field in front ("ids.1: must be a UUID").
 */
export const UuidText = (description?: string) =>
  t.String({ pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$", error: "must be a UUID", ...(description ? { description } : {}) });
