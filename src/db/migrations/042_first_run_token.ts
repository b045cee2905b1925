// The first run's setup token (src/accounts/first-run.ts), one for the whole deployment: every api
// process sharing the database prints the same one, so whichever the administrator's browser
// reaches accepts it. The row goes once the owner exists.
export default `
CREATE TABLE first_run_token (
  slot TEXT PRIMARY KEY CHECK (slot = 'owner'),
  token TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
`;
