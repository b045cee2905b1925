// GET /files?processing_status= (the dashboard's Activity page asks for failed files every few
// seconds): files of one status, newest first, without walking the organization's whole library.
export default `
CREATE INDEX files_list_processing ON files(org_id, processing_status, created_at, id) WHERE deleted_at IS NULL;
`;
