/** Where the versioned API lives: every route of the spec is under this path. */
export const API_PREFIX = "/api/v2";
