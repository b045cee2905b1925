/** Waiting, over the API, for background work the tests started. */
import type { Tenant } from "./server.ts";

/** The file's detail once its processing has finished (completed or failed), or at the deadline. */
export async function processed(tenant: Pick<Tenant, "api">, id: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = (await tenant.api.get(`/files/uploads-status/${id}`)).body;
    if (status.is_terminal || Date.now() > deadline) break;
    await Bun.sleep(50);
  }
  return (await tenant.api.get(`/files/${id}`)).body;
}

/** The job once it has finished (completed, failed or cancelled), or at the deadline. */
export async function jobDone(tenant: Pick<Tenant, "api">, jobId: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = (await tenant.api.get(`/job/${jobId}`)).body;
    if (["completed", "failed", "cancelled"].includes(job.status) || Date.now() > deadline) return job;
    await Bun.sleep(50);
  }
}
