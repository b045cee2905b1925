/**
 * Sending webhook deliveries: one `webhook.deliver` job per delivery, one POST per attempt,
 * retried by the job runner with exponential backoff (MEDIABOX_WEBHOOK_RETRY_BASE_MS doubling,
 * capped at an hour) up to MEDIABOX_WEBHOOK_MAX_ATTEMPTS, after which the delivery is `failed`:
 * the dead-letter list. Each POST goes through the link crawler's pinned fetcher under the
 * webhooks' own egress policy (loopback and private ranges only through
 * MEDIABOX_WEBHOOK_ALLOW_CIDRS, the ports of MEDIABOX_WEBHOOK_PORTS, the checked address is the
 * one connected to). The body is signed:
 * `Mediabox-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the secret>`.
 */
import type { WebhookFeatureDeps } from "./deps.ts";
import { errorMessage } from "../errors.ts";
import type { FileRow } from "../files/file.ts";
import { tagsOf } from "../files/file.ts";
import { PermanentJobError, type QueueDefinition } from "../jobs/runner.ts";
import { LinkFetchError, sendPinned } from "../links/fetch-page.ts";
import { egressPolicy } from "../net/egress-policy.ts";
import { signPayload } from "../payments/webhooks.ts";
import { abandonDelivery, deliveryWork, emitEvent, hasSubscribers, recordAttempt, type WebhookDeps } from "./webhooks.ts";

export const SIGNATURE_HEADER = "Mediabox-Signature";

export function webhookDeps(ctx: WebhookFeatureDeps): WebhookDeps {
  return { sql: ctx.sql, clock: ctx.clock, config: ctx.config, jobs: ctx.jobs, vault: ctx.cloud.vault };
}

/** The signature header's value for a body sent at `timestampSeconds`. */
export function signatureHeader(secret: string, timestampSeconds: number, body: string): string {
  return `t=${timestampSeconds},v1=${signPayload(secret, timestampSeconds, body)}`;
}

/** Failures no retry can mend: the address or URL is refused by policy. */
const FINAL_KINDS = new Set(["blocked", "invalid-url"]);

export function webhookDeliverQueue(ctx: WebhookFeatureDeps): QueueDefinition<"webhook.deliver"> {
  const deps = webhookDeps(ctx);
  return {
    name: "webhook.deliver",
    concurrency: 4,
    backoffMs: ctx.config.webhookRetryBaseMs,
    maxBackoffMs: 60 * 60 * 1000,
    async handler(job) {
      const { deliveryId } = job.payload;
      const work = await deliveryWork(deps, deliveryId);
      if (typeof work === "string") {
        if (work.includes("disabled")) await abandonDelivery(deps, deliveryId, work);
        return [{ delivery_id: deliveryId, skipped: work }];
      }
      const timestamp = Math.floor(ctx.clock.now() / 1000);
      const started = performance.now();
      let statusCode: number | null = null;
      let error: string | null = null;
      let final = false;
      try {
        const answer = await sendPinned(
          work.url,
          {
            method: "POST",
            headers: {
              "Content-Type": "application/json",
              "Mediabox-Event": work.eventType,
              "Mediabox-Delivery": work.id,
              [SIGNATURE_HEADER]: signatureHeader(work.secret, timestamp, work.payload),
            },
            body: work.payload,
          },
          {
            timeoutMs: ctx.config.webhookTimeoutSeconds * 1000,
            egress: egressPolicy(ctx.config, "webhooks"),
            userAgent: ctx.config.linkUserAgent,
            signal: job.signal,
          },
        );
        statusCode = answer.status;
        if (answer.status < 200 || answer.status > 299) error = answer.status >= 300 && answer.status < 400 ? `HTTP ${answer.status} (redirects are not followed)` : `HTTP ${answer.status}`;
      } catch (err) {
        // A stopped job (shutdown, cancel) made no attempt worth recording.
        if (job.signal.aborted) throw err;
        error = err instanceof LinkFetchError ? err.reason : errorMessage(err);
        final = err instanceof LinkFetchError && FINAL_KINDS.has(err.kind);
      }
      const delivered = error === null;
      final ||= !delivered && job.attempt >= job.maxAttempts;
      const nextAttemptAt = delivered || final ? null : ctx.clock.now() + Math.min(60 * 60 * 1000, ctx.config.webhookRetryBaseMs * 2 ** (job.attempt - 1));
      await recordAttempt(deps, work.id, { statusCode, error, durationMs: Math.round(performance.now() - started), delivered, final, nextAttemptAt });
      if (delivered) return [{ delivery_id: work.id, status_code: statusCode }];
      if (final) throw new PermanentJobError(`webhook delivery ${work.id} failed for good: ${error}`);
      throw new Error(`webhook delivery ${work.id} failed: ${error}`);
    },
  };
}

/** The file as webhook events describe it. */
export function fileEventData(file: FileRow): Record<string, unknown> {
  return {
    file: {
      id: file.id,
      filename: file.filename,
      media_type: file.media_type,
      title: file.title,
      tags: tagsOf(file),
      project_id: file.project_id,
      folder_id: file.folder_id,
      size_bytes: file.size_bytes,
      sha256: file.sha256,
      processing_status: file.processing_status,
      processing_error: file.processing_error,
      created_at: file.created_at,
      updated_at: file.updated_at,
    },
  };
}

/** Sends batch.completed when an upload session finishes (in the transaction that finishes it). */
export function sendBatchEvents(ctx: WebhookFeatureDeps): void {
  const deps = webhookDeps(ctx);
  ctx.libraryEvents.on("batch.finished", async (tx, batch) => {
    if (!(await hasSubscribers(tx, batch.orgId, ["batch.completed"]))) return;
    await emitEvent(deps, tx, batch.orgId, "batch.completed", {
      session_id: batch.sessionId,
      status: batch.status,
      total_files: batch.totalFiles,
      completed_files: batch.completedFiles,
      failed_files: batch.failedFiles,
      skipped_files: batch.skippedFiles,
    });
  });
}
