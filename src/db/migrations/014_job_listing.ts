// GET /jobs lists an organization's jobs newest first; without this index it reads every job.
export default `
CREATE INDEX jobs_by_org ON jobs(org_id, created_at);
`;
