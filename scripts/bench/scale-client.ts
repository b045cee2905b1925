/**
 * What bench:scale does over HTTP, as a client would: make the owner (the first run, from loopback:
 * its organization is the unlimited CUSTOM tier) and an API key, upload the files, count the files
 * by processing status until all are done, and check every acknowledged upload: present,
 * completed, and its downloaded bytes' SHA-256 equal to what was sent.
 */
import { waitFor } from "../../test/support/polling.ts";
import type { BenchFile } from "./scale-files.ts";

export interface Acknowledged {
  file: BenchFile;
  id: string;
  /** When the server answered 201 (ms since the epoch). */
  at: number;
}

export interface UploadOutcome {
  acknowledged: Acknowledged[];
  /** Uploads the server did not acknowledge (status and body), which the bench counts as failures of the run. */
  refused: string[];
  firstSentAt: number;
}

export class ScaleClient {
  private key = "";

  constructor(private baseUrl: string) {}

  /** The API moved (the one process was restarted on another port); the key stays valid. */
  moveTo(baseUrl: string): void {
    this.baseUrl = baseUrl;
  }

  private get api(): string {
    return `${this.baseUrl}/api/v2`;
  }

  /** The first run's owner, then an API key of the owner's organization. */
  async setUp(): Promise<void> {
    const setup = await fetch(`${this.api}/auth/session/setup-owner`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ organization_name: "Scale bench", email: "owner@example.com", password: "a long bench password 42" }),
    });
    if (setup.status !== 200 && setup.status !== 201) throw new Error(`setup-owner: ${setup.status} ${await setup.text()}`);
    const cookies = new Map(setup.headers.getSetCookie().map((c) => c.split(";")[0]!.split("=") as [string, string]));
    const cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const csrf = decodeURIComponent(cookies.get("mediabox_csrf") ?? "");
    const made = await fetch(`${this.api}/account/api-keys`, {
      method: "POST",
      headers: { cookie, "x-csrf-token": csrf, "content-type": "application/json" },
      body: JSON.stringify({ name: "scale bench" }),
    });
    if (made.status !== 201) throw new Error(`api key: ${made.status} ${await made.text()}`);
    this.key = ((await made.json()) as { key: string }).key;
  }

  private get auth(): Record<string, string> {
    return { authorization: `Bearer ${this.key}` };
  }

  /** Uploads every file, `concurrency` at a time; `onAck` sees each acknowledgement as it comes. */
  async upload(files: BenchFile[], concurrency: number, onAck: (count: number) => void = () => {}): Promise<UploadOutcome> {
    const acknowledged: Acknowledged[] = [];
    const refused: string[] = [];
    let next = 0;
    const firstSentAt = Date.now();
    const sender = async () => {
      for (let file = files[next++]; file; file = files[next++]) {
        const form = new FormData();
        form.append("file", new File([await Bun.file(file.path).arrayBuffer()], file.name));
        let res: Response;
        try {
          res = await fetch(`${this.api}/files/upload`, { method: "POST", body: form, headers: this.auth });
        } catch (err) {
          // The api process died with the upload in flight: not acknowledged, so not the server's to keep.
          refused.push(`${file.name}: ${(err as Error).message}`);
          continue;
        }
        const body = (await res.json().catch(() => null)) as { image_id?: string; skipped?: boolean } | null;
        if (res.status !== 201 || !body?.image_id || body.skipped) {
          refused.push(`${file.name}: ${res.status} ${JSON.stringify(body)}`);
          continue;
        }
        acknowledged.push({ file, id: body.image_id, at: Date.now() });
        onAck(acknowledged.length);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, sender));
    return { acknowledged, refused, firstSentAt };
  }

  private async count(status: string): Promise<number> {
    const res = await fetch(`${this.api}/files?processing_status=${status}&limit=1`, { headers: this.auth });
    if (res.status !== 200) throw new Error(`GET /files?processing_status=${status}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { total_count: number }).total_count;
  }

  /** The organization's jobs with this status (GET /jobs: every queue, file processing and what follows it). */
  async jobCount(status: string): Promise<number> {
    const res = await fetch(`${this.api}/jobs?status=${status}&limit=1`, { headers: this.auth });
    if (res.status !== 200) throw new Error(`GET /jobs?status=${status}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { total_count: number }).total_count;
  }

  /**
   * Once the files are done, jobs they queued (embedding a document's chunks, ...) may still run:
   * waits until none is pending or running, then answers how many completed and how many failed.
   */
  async settledJobs(timeoutMs: number): Promise<{ completed: number; failed: number; cancelled: number }> {
    let open = 0;
    await waitFor(async () => (open = (await this.jobCount("pending")) + (await this.jobCount("processing"))) === 0, {
      what: () => `the organization's jobs to end (${open} pending or running)`,
      timeoutMs,
      intervalMs: 100,
      maxIntervalMs: 500,
    });
    const [completed, failed, cancelled] = await Promise.all(["completed", "failed", "cancelled"].map((status) => this.jobCount(status)));
    return { completed: completed!, failed: failed!, cancelled: cancelled! };
  }

  /** Files whose processing has ended (completed, failed, or stored: a kind nothing analyses). */
  async doneCount(): Promise<number> {
    const counts = await Promise.all(["completed", "failed", "stored"].map((status) => this.count(status)));
    return counts.reduce((a, b) => a + b, 0);
  }

  /**
   * Polls until `expected()` files are done (`expected` grows while uploads are acknowledged;
   * `uploading()` says whether more may come); `onProgress` sees every count. Throws at the deadline.
   */
  async waitUntilDone(expected: () => number, uploading: () => boolean, timeoutMs: number, onProgress: (done: number) => void | Promise<void> = () => {}): Promise<number> {
    let done = 0;
    await waitFor(
      async () => {
        done = await this.doneCount();
        await onProgress(done);
        return !uploading() && done >= expected();
      },
      { what: () => `every file's processing to end (${done} of ${expected()} done)`, timeoutMs, intervalMs: 100, maxIntervalMs: 500 },
    );
    return Date.now();
  }

  /** The file's unified status (GET /files/uploads-status/{id}), or null when the server does not know it. */
  async status(id: string): Promise<{ processing: string; unified: string; completedAt: string | null; retries: number; error: string | null } | null> {
    const res = await fetch(`${this.api}/files/uploads-status/${id}`, { headers: this.auth });
    if (res.status === 404) return null;
    if (res.status !== 200) throw new Error(`GET /files/uploads-status/${id}: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as {
      unified_status: string;
      component_statuses: { processing_status: string };
      completed_at: string | null;
      retry_count: number;
      error_message: string | null;
    };
    return { processing: body.component_statuses.processing_status, unified: body.unified_status, completedAt: body.completed_at, retries: body.retry_count, error: body.error_message };
  }

  /** The SHA-256 of the file's bytes as a client downloads them (the signed URL the server redirects to), or null when there are none. */
  async downloadedSha256(id: string): Promise<string | null> {
    const res = await fetch(`${this.api}/files/${id}/download`, { headers: this.auth, redirect: "manual" });
    const location = res.headers.get("location");
    await res.arrayBuffer();
    if (res.status !== 302 || !location) return null;
    // The signed URL carries its own authorization (the local endpoint's or S3's).
    const bytes = await fetch(new URL(location, this.baseUrl));
    if (bytes.status !== 200) return null;
    return new Bun.CryptoHasher("sha256").update(new Uint8Array(await bytes.arrayBuffer())).digest("hex");
  }
}

export interface Verdict {
  /** Acknowledged files the server no longer knows. */
  missing: string[];
  /** Acknowledged files whose processing did not complete (failed, or still running). */
  notCompleted: string[];
  /** Completed files whose downloaded bytes differ from the upload's (or could not be downloaded). */
  bytesDiffer: string[];
  /** Files processed more than once (a retry: a lease taken over, or a failure retried). */
  retried: number;
  /** The latest completion time the server recorded (ms since the epoch). */
  lastCompletedAt: number | null;
  byStatus: Map<string, number>;
}

export function lostCount(verdict: Verdict): number {
  return verdict.missing.length + verdict.notCompleted.length + verdict.bytesDiffer.length;
}

/** Checks every acknowledged file, `concurrency` at a time. */
export async function verify(client: ScaleClient, acknowledged: Acknowledged[], concurrency = 8): Promise<Verdict> {
  const verdict: Verdict = { missing: [], notCompleted: [], bytesDiffer: [], retried: 0, lastCompletedAt: null, byStatus: new Map() };
  let next = 0;
  const checker = async () => {
    for (let ack = acknowledged[next++]; ack; ack = acknowledged[next++]) {
      const label = `${ack.file.name} (${ack.id})`;
      const status = await client.status(ack.id);
      if (!status) {
        verdict.missing.push(label);
        continue;
      }
      verdict.byStatus.set(status.unified, (verdict.byStatus.get(status.unified) ?? 0) + 1);
      if (status.retries > 0) verdict.retried += 1;
      if (status.completedAt) verdict.lastCompletedAt = Math.max(verdict.lastCompletedAt ?? 0, Date.parse(status.completedAt));
      if (status.processing !== "completed") {
        verdict.notCompleted.push(`${label}: ${status.processing}${status.error ? ` (${status.error})` : ""}`);
        continue;
      }
      const sha = await client.downloadedSha256(ack.id);
      if (sha !== ack.file.sha256) verdict.bytesDiffer.push(`${label}: ${sha === null ? "no bytes to download" : `downloaded ${sha.slice(0, 12)}..., sent ${ack.file.sha256.slice(0, 12)}...`}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, checker));
  return verdict;
}
