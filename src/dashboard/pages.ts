/** Where the dashboard lives: its page paths (mailed links open some of them) and its assets. */
export const DASHBOARD_ASSETS_PATH = "/app/assets";

/** The dashboard's own page, and the pages that verification, password-reset and invitation links open. */
export const DASHBOARD_PAGES: readonly string[] = ["/", "/auth/verify-email", "/auth/reset-password", "/auth/accept-invite"];
