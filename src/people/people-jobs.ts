/**
 * The periodic clustering of faces left without a person: a `people.cluster` job per
 * organization, enqueued (once while one is pending) a little after faces are stored, so a burst
 * of uploads is clustered in one pass, and on demand (POST /people/recluster).
 */
import type { JobRunner, QueueDefinition } from "../jobs/runner.ts";
import { clusterUnassigned, type PeopleDeps } from "./people.ts";

/** Faces stored within this long of each other are clustered together. */
export const CLUSTER_DELAY_MS = 10_000;

export async function enqueueClustering(ctx: Pick<PeopleDeps, "clock"> & { jobs: Pick<JobRunner, "submit"> }, orgId: string, delayMs = CLUSTER_DELAY_MS): Promise<string> {
  return (await ctx.jobs.submit({ queue: "people.cluster", orgId, payload: { orgId }, dedupeKey: `people-cluster:${orgId}`, runAt: ctx.clock.now() + delayMs, maxAttempts: 3 })).id;
}

export function peopleClusterQueue(ctx: PeopleDeps): QueueDefinition<"people.cluster"> {
  return {
    name: "people.cluster",
    concurrency: 1,
    async handler(job) {
      // The new people and their faces commit with the lease checked (another worker may have taken the job over).
      const made = await clusterUnassigned(ctx, job.payload.orgId, (fn) => job.transaction(fn));
      return [{ org_id: job.payload.orgId, people_made: made.people, faces_assigned: made.faces }];
    },
  };
}
