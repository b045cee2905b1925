/**
 * Waiting in tests: every wait polls a condition until a deadline, never a fixed sleep or a fixed
 * number of tries, so a busy machine only makes a test slower, not red. Deadlines are generous:
 * they only bound a hang, and the timeout message says what was awaited and what was seen last.
 */
import type { ApiClient, ApiResponse, Tenant } from "./server.ts";

export interface WaitOptions {
  /** What is awaited, for the timeout message ("file 123 to finish processing"). */
  what: string | (() => string);
  /** The deadline, from the first probe. */
  timeoutMs?: number;
  /** The pause after the first probe; it grows by half after each probe, up to `maxIntervalMs`. */
  intervalMs?: number;
  maxIntervalMs?: number;
}

/**
 * Resolves with the first truthy value `probe` returns; probes again after a growing pause
 * until the deadline, then throws `timed out after N ms waiting for <what>` with the last value
 * seen. An error thrown by `probe` is not retried: it fails the wait at once.
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  { what, timeoutMs = 60_000, intervalMs = 50, maxIntervalMs = Math.max(intervalMs, 500) }: WaitOptions,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let pause = intervalMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === "function" ? what() : what}; last value seen: ${show(value)}`);
    }
    await Bun.sleep(Math.min(pause, left));
    pause = Math.min(maxIntervalMs, pause * 1.5);
  }
}

function show(value: unknown): string {
  let text: string;
  try {
    text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 2_000 ? `${text.slice(0, 2_000)}…` : text;
}

/** Who polls: a tenant's client and, when it can make them, more keys of the same organization. */
export type Poller = Pick<Tenant, "api"> & Partial<Pick<Tenant, "keyWith">>;

/** One view-only polling key per poller, made on its first poll (not one for every wait). */
const pollKeys = new WeakMap<Poller, Promise<ApiClient>>();
function pollKey(poller: Poller): Promise<ApiClient> {
  if (!poller.keyWith) return Promise.resolve(poller.api);
  let key = pollKeys.get(poller);
  if (!key) pollKeys.set(poller, (key = poller.keyWith(["view"])));
  return key;
}

/**
 * GETs for a poll that survive the per-key rate limit (STARTER allows 30 requests a minute, and a
 * slow machine means more polls). When the poller can make keys, polls go through a view-only key
 * of their own, so they never use up the caller's key (a test that polled, then asked with its own
 * key, met 429 on a slow machine); on 429 it continues with a fresh key (a manual clock that never
 * moves never reopens a window), and otherwise waits out Retry-After within `deadline`. Past the
 * deadline the 429 is returned, for the caller's timeout message.
 */
export class PollingClient {
  private api: Promise<ApiClient>;

  constructor(private readonly poller: Poller) {
    this.api = pollKey(poller);
  }

  /** Whether a 429 is met with a fresh key (no waiting), so polls may come often. */
  get renewsKeys(): boolean {
    return this.poller.keyWith !== undefined;
  }

  async get<T = any>(path: string, deadline: number): Promise<ApiResponse<T>> {
    let freshKey = false;
    for (;;) {
      const res = await (await this.api).get<T>(path);
      if (res.status !== 429) return res;
      if (this.poller.keyWith && !freshKey) {
        this.api = this.poller.keyWith(["view"]);
        pollKeys.set(this.poller, this.api);
        freshKey = true;
        continue;
      }
      const wait = Math.max(1, Number(res.headers.get("retry-after")) || 1) * 1000;
      if (Date.now() + wait > deadline) return res;
      await Bun.sleep(wait);
    }
  }
}

/**
 * Polls an API path until `done` accepts its response; resolves with that response. An error
 * answer other than 429 or 503 fails the wait at once (it will not turn into the awaited state).
 */
export async function pollApi<T = any>(
  poller: Poller | PollingClient,
  path: string,
  done: (res: ApiResponse<T>) => boolean,
  { what, timeoutMs = 60_000 }: { what: string; timeoutMs?: number },
): Promise<ApiResponse<T>> {
  const client = poller instanceof PollingClient ? poller : new PollingClient(poller);
  const deadline = Date.now() + timeoutMs;
  let last: ApiResponse<T> | null = null;
  return waitFor(
    async () => {
      const res: ApiResponse<T> = (last = await client.get<T>(path, deadline));
      if (res.status >= 400 && res.status !== 429 && res.status !== 503) {
        throw new Error(`GET ${path} answered ${res.status} ${show(res.body)} while waiting for ${what}`);
      }
      return done(res) ? res : null;
    },
    {
      what: () => `${what} (GET ${path}; last answer: ${last ? `${last.status} ${show(last.body)}` : "none"})`,
      timeoutMs,
      // Each poll past the moment it ends adds up to an interval to the test: a client that renews
      // its key on a 429 polls four times a second; one that would wait out Retry-After, once.
      maxIntervalMs: client.renewsKeys ? 250 : 1_000,
    },
  );
}

/** The file's upload status (GET /files/uploads-status/{id}) once it is terminal; throws at the deadline. */
export async function terminalStatus(poller: Poller | PollingClient, id: string, timeoutMs = 60_000) {
  const res = await pollApi(poller, `/files/uploads-status/${id}`, (r) => r.status === 200 && r.body.is_terminal === true, {
    what: `file ${id} to finish processing`,
    timeoutMs,
  });
  return res.body;
}

/** The file's detail once its processing has finished (completed or failed); throws at the deadline. */
export async function processed(poller: Poller, id: string, timeoutMs = 60_000) {
  const client = new PollingClient(poller);
  const deadline = Date.now() + timeoutMs;
  const status = await terminalStatus(client, id, timeoutMs);
  // The runner writes the file's status first and its job's after: wait for the job too, so a
  // caller that reads the job next sees it ended.
  for (const jobId of (status.processing_ids ?? []) as string[]) await jobDone(client, jobId, Math.max(1_000, deadline - Date.now()));
  const detail = await client.get(`/files/${id}`, deadline);
  if (detail.status !== 200) throw new Error(`GET /files/${id} answered ${detail.status} ${show(detail.body)} after its processing finished`);
  return detail.body;
}

/** The job once it has finished (completed, failed or cancelled); throws at the deadline. */
export async function jobDone(poller: Poller | PollingClient, jobId: string, timeoutMs = 60_000) {
  const res = await pollApi(poller, `/job/${jobId}`, (r) => r.status === 200 && ["completed", "failed", "cancelled"].includes(r.body.status), {
    what: `job ${jobId} to finish`,
    timeoutMs,
  });
  return res.body;
}

/** Resolves once `now()` has passed `instant` (ms or ISO string): the next timestamp differs from it. */
export async function clockPassed(instant: number | string, now: () => number = Date.now): Promise<void> {
  const ms = typeof instant === "string" ? Date.parse(instant) : instant;
  if (Number.isNaN(ms)) throw new Error(`clockPassed: not an instant: ${instant}`);
  await waitFor(() => now() > ms, { what: `the clock to pass ${new Date(ms).toISOString()}`, intervalMs: 1, maxIntervalMs: 5 });
}
