/**
 * Real-time channels (spec "Events"): domain code publishes JSON messages to a named channel
 * such as `batch.<session_id>`; WebSocket clients subscribed to it receive them. Backed by
 * Bun's built-in pub/sub, so fan-out costs one call whatever the number of subscribers.
 *
 * Processes sharing a PostgreSQL database (docs/scale-out.md) relay their messages through it: a
 * worker importing a batch publishes, and the process holding the client's WebSocket delivers.
 * Each process listens on one database channel and hands what arrives to its own subscribers
 * (PostgreSQL delivers a notification to its sender's listener too, so a message reaches every
 * process once, its publisher included).
 */
import type { Server } from "bun";
import type { Subscription } from "../db/sql-client.ts";

export interface ChannelMessage {
  type: string;
  channel: string;
  [field: string]: unknown;
}

/** What the hub needs of the shared database: its notifications (db/sql-client.ts). */
export interface EventRelay {
  listen(channel: string, onPayload: (payload: string) => void): Promise<Subscription>;
  notify(channel: string, payload: string): Promise<void>;
}

/** The database channel every process's messages cross. */
const RELAY_CHANNEL = "mediabox_events";
/** PostgreSQL refuses a notification payload of 8,000 bytes or more. */
const MAX_RELAYED_BYTES = 7_900;

export class EventHub {
  private server: Pick<Server<unknown>, "publish" | "subscriberCount"> | null = null;
  private relay: EventRelay | null = null;
  private subscription: Subscription | null = null;
  /** The last relayed message's notification: the next waits for it (a pool would otherwise reorder them). */
  private relayed: Promise<void> = Promise.resolve();

  constructor(private readonly onRelayError: (err: unknown) => void = () => {}) {}

  attach(server: Pick<Server<unknown>, "publish" | "subscriberCount">): void {
    this.server = server;
  }

  /** Publishes through the shared database from now on, and delivers what any process publishes. Resolves once listening. */
  async relayThrough(relay: EventRelay): Promise<void> {
    this.subscription = await relay.listen(RELAY_CHANNEL, (payload) => {
      const newline = payload.indexOf("\n");
      if (newline > 0) this.server?.publish(payload.slice(0, newline), payload.slice(newline + 1));
    });
    this.relay = relay;
  }

  async close(): Promise<void> {
    this.relay = null;
    await this.subscription?.unlisten();
    this.subscription = null;
  }

  /**
   * Whether any client may be subscribed to `channel`: a message costly to compose (a batch's live
   * counts read every session item) is skipped when nobody would receive it. With a relay the
   * client may be another process's, which this one cannot see: always true.
   */
  listened(channel: string): boolean {
    return this.relay !== null || (this.server?.subscriberCount(channel) ?? 0) > 0;
  }

  publish(channel: string, type: string, data: Record<string, unknown>): void {
    const message: ChannelMessage = { type, channel, ...data, sent_at: new Date().toISOString() };
    const text = JSON.stringify(message);
    const payload = `${channel}\n${text}`;
    const relay = this.relay;
    if (relay && Buffer.byteLength(payload) <= MAX_RELAYED_BYTES) {
      this.relayed = this.relayed.then(() =>
        relay.notify(RELAY_CHANNEL, payload).catch((err) => {
          this.onRelayError(err);
          // The database could not take it: this process's own subscribers still get it.
          this.server?.publish(channel, text);
        }),
      );
      return;
    }
    this.server?.publish(channel, text);
  }
}
