// Request counts per rate-limit bucket and one-minute window (src/ratelimit/shared-limiter.ts),
// for processes sharing one database: each api process counts its requests here so a key's limit
// holds across all of them. The single-box appliance counts in memory and leaves it empty.
export default `
CREATE TABLE rate_limit_windows (
  bucket TEXT NOT NULL,
  window_start INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (bucket, window_start)
) WITHOUT ROWID;
`;
