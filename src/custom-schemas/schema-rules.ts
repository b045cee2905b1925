/**
 * What a custom extraction schema may look like (spec "Custom extraction schemas"), as pure
 * functions: `schemaProblems` answers every reason a JSON Schema is refused, each naming the
 * JSON path of the offending node; `countFields` gives the resource's field_count.
 *
 * Two layers. Our own walk enforces the spec's shape limits (root object, depth, properties per
 * object, node count, size, types, anyOf as the only composition) and refuses every keyword that
 * would put a subschema where the walk cannot see it. Ajv then checks the keyword values against
 * the draft-07 meta-schema and compiles the schema in strict mode, which catches what a walk of
 * the shape does not (a `required` that is not a string array, a `pattern` that is not a regular
 * expression, `minimum` on a string).
 *
 * Why Ajv here when every request shape is TypeBox (src/http/validation.ts): a custom schema is
 * data, not a request shape. The user writes an arbitrary draft-07 JSON Schema; the API's own
 * schema for the request only says "a JSON value" (t.Unknown), and whether that value is a valid
 * JSON Schema is judged by the draft-07 meta-schema and a strict compile, which is Ajv's job.
 */
import Ajv from "ajv";

export const SCHEMA_LIMITS = {
  maxDepth: 3,
  maxPropertiesPerObject: 50,
  maxNodes: 200,
  maxBytes: 32 * 1024,
} as const;

export const ALLOWED_TYPES = ["string", "integer", "number", "boolean", "array", "object"] as const;

/** More than this many problems would bury the first ones; the rest are summarized. */
const MAX_REPORTED = 5;

const COMPOSITION = "the only composition keyword allowed is anyOf";
const REFERENCES = "references are not supported; write the subschema inline";
const PLACEMENT = "fields must be declared under properties (objects) or items (arrays)";

/** Keywords Ajv knows but that a custom schema may not use, with the reason given to the caller. */
const FORBIDDEN: Record<string, string> = {
  allOf: COMPOSITION,
  oneOf: COMPOSITION,
  not: COMPOSITION,
  if: `${COMPOSITION} (no if/then/else)`,
  then: `${COMPOSITION} (no if/then/else)`,
  else: `${COMPOSITION} (no if/then/else)`,
  $ref: REFERENCES,
  $defs: `${REFERENCES} ($defs/definitions are not allowed)`,
  definitions: `${REFERENCES} ($defs/definitions are not allowed)`,
  // Identifiers only serve $ref; they would also register URIs in the shared validator.
  $id: REFERENCES,
  id: REFERENCES,
  patternProperties: PLACEMENT,
  propertyNames: PLACEMENT,
  dependencies: PLACEMENT,
  additionalItems: PLACEMENT,
  contains: PLACEMENT,
  contentSchema: PLACEMENT,
  nullable: `"null" is not an allowed type; leave the property out of required instead`,
  $async: "asynchronous schemas are not supported",
  $vocabulary: "only meta-schemas declare vocabularies",
};

const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;

// One validator for the process. addUsedSchema: false and removeSchema after each compile keep
// tenants' schemas out of its registry and cache ($id, which would register a URI, is forbidden).
// strictRequired is off because `anyOf: [{required: [a]}, {required: [b]}]` names the holder's
// properties; the walk checks required names itself, knowing the holder. Formats are annotations
// for the extraction model, so unknown ones ("date", "email") are not an error.
const ajv = new Ajv({ strict: true, strictRequired: false, allErrors: true, validateFormats: false, addUsedSchema: false });

type Json = Record<string, unknown>;
type Path = readonly (string | number)[];

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** `schema.properties.address["zip code"].anyOf[0]`: a path a client can find in what it sent. */
export function formatPath(path: Path): string {
  let out = "schema";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) out += `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** Every reason the schema is refused; empty when it is acceptable. */
export function schemaProblems(raw: unknown): string[] {
  if (!isObject(raw)) {
    return [`schema: must be a JSON object (a JSON Schema whose type is "object"), got ${describe(raw)}`];
  }
  const bytes = new TextEncoder().encode(JSON.stringify(raw)).length;
  if (bytes > SCHEMA_LIMITS.maxBytes) {
    return [`schema: must be at most ${SCHEMA_LIMITS.maxBytes} bytes (32 KB) of JSON, got ${bytes} bytes`];
  }
  const walk = new Walk();
  walk.root(raw);
  if (walk.problems.length > 0) return summarize(walk.problems);
  return summarize(ajvProblems(raw));
}

/**
 * field_count: how many values an extraction fills in, i.e. the schema's leaves. A property
 * whose schema is a scalar counts 1. An object with properties counts the sum of its
 * properties' leaves, so nested objects are flattened. An array counts its items' leaves: an
 * array of scalars is 1 field, an array of objects counts the item object's properties once
 * (not per element). An object without properties (a free-form map) counts 1, and anyOf counts
 * its largest alternative. The root's own node is not a field.
 */
export function countFields(node: unknown): number {
  if (!isObject(node)) return 1;
  if (isObject(node.properties) && Object.keys(node.properties).length > 0) {
    return Object.values(node.properties).reduce<number>((sum, child) => sum + countFields(child), 0);
  }
  if (node.type === "array" || "items" in node) return isObject(node.items) ? countFields(node.items) : 1;
  if (Array.isArray(node.anyOf) && node.anyOf.length > 0) return Math.max(...node.anyOf.map(countFields));
  return 1;
}

interface Position {
  /** Objects on the path above this node; the node itself adds one if it is an object. */
  outerDepth: number;
  /** An anyOf branch may omit `type` when the node holding the anyOf declares it. */
  typedByHolder: boolean;
  /** The properties an anyOf branch's `required` may name (the holder's). */
  holderProperties: Json | null;
}

class Walk {
  readonly problems: string[] = [];
  private nodes = 0;

  root(schema: Json): void {
    if (schema.type !== "object") {
      this.problem(["type"], `the root type must be "object", got ${describe(schema.type)}`);
    }
    if (!isObject(schema.properties) || Object.keys(schema.properties).length === 0) {
      this.problem(["properties"], "the root object must declare at least one property");
    }
    if ("$schema" in schema && !(typeof schema.$schema === "string" && DRAFT_07.test(schema.$schema))) {
      this.problem(["$schema"], "only the draft-07 meta-schema (http://json-schema.org/draft-07/schema#) is supported; omit $schema to use it");
    }
    this.visit(schema, [], { outerDepth: 0, typedByHolder: true, holderProperties: null });
    if (this.nodes > SCHEMA_LIMITS.maxNodes) {
      this.problems.unshift(
        `schema: at most ${SCHEMA_LIMITS.maxNodes} schema nodes are allowed (the root, every property, items and anyOf schema), got ${this.nodes}`,
      );
    }
  }

  private problem(path: Path, rule: string): void {
    this.problems.push(`${formatPath(path)}: ${rule}`);
  }

  private visit(node: unknown, path: Path, at: Position): void {
    this.nodes += 1;
    if (!isObject(node)) {
      this.problem(path, `must be a JSON Schema object, got ${describe(node)}`);
      return;
    }
    this.checkKeywords(node, path);
    if (path.length > 0) this.checkType(node, path, at); // the root's type rule is root()'s
    if (typeof node.pattern === "string") this.checkPattern(node.pattern, [...path, "pattern"]);

    const objectNode = node.type === "object" || (node.type === undefined && "properties" in node);
    const depth = at.outerDepth + (objectNode ? 1 : 0);
    if (objectNode && depth > SCHEMA_LIMITS.maxDepth) {
      this.problem(path, `maximum depth is ${SCHEMA_LIMITS.maxDepth} (this object is at depth ${depth}; the root object is depth 1)`);
      return;
    }

    const properties = isObject(node.properties) ? node.properties : null;
    if ("properties" in node && !properties) {
      this.problem([...path, "properties"], "must be an object mapping property names to schemas");
    }
    if (properties) {
      const count = Object.keys(properties).length;
      if (count > SCHEMA_LIMITS.maxPropertiesPerObject) {
        this.problem([...path, "properties"], `at most ${SCHEMA_LIMITS.maxPropertiesPerObject} properties per object, got ${count}`);
      }
      for (const [name, child] of Object.entries(properties)) {
        this.visit(child, [...path, "properties", name], { outerDepth: depth, typedByHolder: false, holderProperties: null });
      }
    }
    this.checkRequired(node, path, properties ?? at.holderProperties);

    if ("additionalProperties" in node && typeof node.additionalProperties !== "boolean") {
      this.problem([...path, "additionalProperties"], `must be true or false (a schema there is not supported: ${PLACEMENT})`);
    }
    if (node.type === "array" && !("items" in node)) {
      this.problem(path, "an array must declare items (the schema of its elements)");
    }
    if ("items" in node) {
      if (Array.isArray(node.items)) {
        this.problem([...path, "items"], "must be one schema for every element (tuple arrays are not supported)");
      } else {
        this.visit(node.items, [...path, "items"], { outerDepth: depth, typedByHolder: false, holderProperties: null });
      }
    }
    if (Array.isArray(node.anyOf)) {
      // The alternatives stand at this node's position, so they are measured from its parent.
      node.anyOf.forEach((branch, i) =>
        this.visit(branch, [...path, "anyOf", i], {
          outerDepth: at.outerDepth,
          typedByHolder: node.type !== undefined,
          holderProperties: properties,
        }),
      );
    }
  }

  private checkKeywords(node: Json, path: Path): void {
    for (const key of Object.keys(node)) {
      const reason = FORBIDDEN[key];
      if (reason) this.problem([...path, key], `${key} is not allowed: ${reason}`);
      else if (key === "$schema" && path.length > 0) this.problem([...path, key], "$schema is only allowed at the root");
      else if (!ajv.RULES.keywords[key]) this.problem([...path, key], `unknown keyword "${key}"`);
    }
  }

  private checkType(node: Json, path: Path, at: Position): void {
    const type = node.type;
    if (type === undefined) {
      if (!at.typedByHolder && !("anyOf" in node)) {
        this.problem(path, `must declare a type (one of ${ALLOWED_TYPES.join(", ")}) or anyOf`);
      }
      return;
    }
    if (Array.isArray(type)) {
      this.problem([...path, "type"], "must be a single type name; use anyOf for alternatives");
      return;
    }
    if (typeof type !== "string" || !(ALLOWED_TYPES as readonly string[]).includes(type)) {
      const hint = type === "date" || type === "datetime" ? ` (for dates use {"type": "string", "format": "date"})` : "";
      this.problem([...path, "type"], `type ${describe(type)} is not supported; allowed types are ${ALLOWED_TYPES.join(", ")}${hint}`);
      return;
    }
    if (Array.isArray(node.enum)) {
      const wrong = node.enum.find((value) => !matchesType(value, type));
      if (wrong !== undefined) {
        this.problem([...path, "enum"], `every value must be of type ${type}, got ${describe(wrong)}`);
      }
    }
  }

  /** Ajv would refuse it too, but without saying where. */
  private checkPattern(pattern: string, path: Path): void {
    try {
      new RegExp(pattern, "u"); // Ajv compiles patterns with the u flag
    } catch (error) {
      this.problem(path, `not a valid regular expression (${(error as Error).message})`);
    }
  }

  private checkRequired(node: Json, path: Path, properties: Json | null): void {
    if (!Array.isArray(node.required) || !properties) return; // a malformed `required` is Ajv's to report
    for (const name of node.required) {
      if (typeof name === "string" && !Object.hasOwn(properties, name)) {
        this.problem([...path, "required"], `"${name}" is not one of the declared properties`);
      }
    }
  }
}

function matchesType(value: unknown, type: string): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    default:
      return isObject(value);
  }
}

function ajvProblems(schema: Json): string[] {
  let valid: boolean;
  try {
    valid = ajv.validateSchema(schema) as boolean;
  } catch (error) {
    return [fromAjvMessage((error as Error).message)];
  }
  if (!valid) {
    return (ajv.errors ?? []).map((e) => `${formatPath(pointerToPath(e.instancePath))}: ${e.message ?? "is invalid"}`);
  }
  try {
    ajv.compile(schema);
    return [];
  } catch (error) {
    return [fromAjvMessage((error as Error).message)];
  } finally {
    ajv.removeSchema(schema);
  }
}

/** Ajv's strict-mode messages end with `at "#/properties/a"`; move that location to the front. */
function fromAjvMessage(message: string): string {
  const text = message.replace(/^strict mode: /, "");
  const match = /^(.*?) at "[^"#]*#([^"]*)"(.*)$/.exec(text);
  if (!match) return `schema: ${text}`;
  return `${formatPath(pointerToPath(match[2] ?? ""))}: ${match[1]}${match[3]}`;
}

function pointerToPath(pointer: string): Path {
  const segments = pointer.split("/").slice(1).map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
  return segments.map((segment, i) => (/^\d+$/.test(segment) && segments[i - 1] !== "properties" ? Number(segment) : segment));
}

function summarize(problems: string[]): string[] {
  const unique = [...new Set(problems)];
  if (unique.length <= MAX_REPORTED) return unique;
  return [...unique.slice(0, MAX_REPORTED), `… and ${unique.length - MAX_REPORTED} more`];
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return JSON.stringify(value);
}
