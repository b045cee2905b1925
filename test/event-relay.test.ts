/**
 * Real-time messages across processes (events/hub.ts): on PostgreSQL each process's hub relays
 * through the database, so a message published where a batch is imported (a worker) reaches the
 * WebSocket subscribers of another process (the api), once each; without a relay (SQLite, one
 * process) messages stay in the process.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { PostgresClient } from "../src/db/postgres-client.ts";
import { openPostgres } from "../src/db/postgres-database.ts";
import { EventHub } from "../src/events/hub.ts";
import { waitFor } from "./support/polling.ts";
import { postgresOrSkip, startPostgres, type TestPostgres } from "./support/postgres.ts";

/** Stands in for Bun's server: what its pub/sub would send to the channel's subscribers. */
function fakeServer(subscribed: string[] = []) {
  const sent: { channel: string; message: Record<string, unknown> }[] = [];
  return {
    sent,
    publish(channel: string, text: string) {
      sent.push({ channel, message: JSON.parse(text) });
      return text.length;
    },
    subscriberCount: (channel: string) => (subscribed.includes(channel) ? 1 : 0),
  };
}

test("without a relay a message goes to this process's subscribers only, and is composed only when someone listens", () => {
  const hub = new EventHub();
  const server = fakeServer(["batch.a"]);
  hub.attach(server as never);
  expect([hub.listened("batch.a"), hub.listened("batch.b")]).toEqual([true, false]);
  hub.publish("batch.a", "progress", { completed: 1 });
  expect(server.sent).toEqual([{ channel: "batch.a", message: expect.objectContaining({ type: "progress", channel: "batch.a", completed: 1 }) }]);
});

const binaries = postgresOrSkip();
describe.skipIf(!binaries)("relayed through PostgreSQL", () => {
  let pg: TestPostgres;
  let api: PostgresClient;
  let worker: PostgresClient;
  beforeAll(async () => {
    pg = await startPostgres(binaries!);
    const url = await pg.createDatabase("event_relay");
    // Two pools, as two processes have.
    [api, worker] = await Promise.all([openPostgres(url, { max: 2 }), openPostgres(url, { max: 2 })]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([api?.close(), worker?.close()]);
    await pg?.stop();
  });

  test("a message published in one process reaches the subscribers of the other, once, with its fields; each hub stops on close", async () => {
    const apiHub = new EventHub();
    const workerHub = new EventHub();
    const apiServer = fakeServer();
    const workerServer = fakeServer();
    apiHub.attach(apiServer as never);
    workerHub.attach(workerServer as never);
    await Promise.all([apiHub.relayThrough(api), workerHub.relayThrough(worker)]);
    // The worker cannot see the api's subscribers: it composes its messages anyway.
    expect(workerHub.listened("batch.s1")).toBe(true);
    workerHub.publish("batch.s1", "file_completed", { item_index: 3, note: "ünïcode\nand a newline" });
    workerHub.publish("batch.s1", "session_completed", { total: 4 });
    await waitFor(() => apiServer.sent.length === 2 && workerServer.sent.length === 2, { what: "both processes got both messages", timeoutMs: 10_000 });
    expect(apiServer.sent.map((s) => [s.channel, s.message.type, s.message.item_index ?? s.message.total])).toEqual([
      ["batch.s1", "file_completed", 3],
      ["batch.s1", "session_completed", 4],
    ]);
    expect(apiServer.sent[0]!.message.note).toBe("ünïcode\nand a newline");
    // A message too large for a notification stays with its own process's subscribers.
    workerHub.publish("batch.s1", "progress", { blob: "x".repeat(10_000) });
    await apiHub.close();
    workerHub.publish("batch.s1", "progress", { after: "close" });
    await waitFor(() => workerServer.sent.length === 4, { what: "the worker got its own messages", timeoutMs: 10_000 });
    expect(apiServer.sent).toHaveLength(2);
    await workerHub.close();
  });
});
