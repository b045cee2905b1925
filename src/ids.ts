/** The one definition of what the API accepts as an id: a UUID, compared in lower case. */
import { badRequest } from "./errors.ts";

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The lower-cased UUID, or a 400 naming the field. */
export function parseUuid(value: string, field: string): string {
  if (!UUID_PATTERN.test(value)) throw badRequest(`${field}: must be a UUID`);
  return value.toLowerCase();
}
