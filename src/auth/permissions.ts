/**
 * What an API key may do. The spec grants permissions per resource action; Mediabox keys hold
 * the three actions and every route declares the one it needs (reads VIEW, writes EDIT,
 * removals DELETE).
 */
export const PERMISSIONS = ["view", "edit", "delete"] as const;
export type Permission = (typeof PERMISSIONS)[number];

export function parsePermissions(raw: string): Permission[] {
  const items = raw.split(",").map((p) => p.trim().toLowerCase()).filter(Boolean);
  if (items.length === 0) throw new Error("at least one permission is required (view, edit, delete)");
  for (const item of items) {
    if (!(PERMISSIONS as readonly string[]).includes(item)) {
      throw new Error(`unknown permission "${item}"; expected view, edit or delete`);
    }
  }
  return PERMISSIONS.filter((p) => items.includes(p));
}
