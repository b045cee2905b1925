/**
 * Rules shared by user-chosen names (organizations, projects, folders): trimmed, non-empty,
 * bounded, free of path separators and control characters, and compared case-insensitively.
 */
import { badRequest } from "../errors.ts";

const FORBIDDEN = /[/\\\u0000-\u001f\u007f]/;

/** Returns the trimmed name or throws a 400 naming the field and the rule it broke. */
export function validName(field: string, raw: string, maxLength = 255): string {
  const name = raw.trim();
  if (name.length === 0) throw badRequest(`${field}: must not be blank`);
  if (name.length > maxLength) throw badRequest(`${field}: must be at most ${maxLength} characters (got ${name.length})`);
  if (FORBIDDEN.test(name)) throw badRequest(`${field}: must not contain '/', '\\', NUL or other control characters`);
  return name;
}

/** The key two names are compared by: Unicode-normalized and case-folded. */
export function nameKey(name: string): string {
  return name.normalize("NFKC").toLocaleLowerCase("und");
}
