/**
 * Real-time channels (spec "Events"): domain code publishes JSON messages to a named channel
 * such as `batch.<session_id>`; WebSocket clients subscribed to it receive them. Backed by
 * Bun's built-in pub/sub, so fan-out costs one call whatever the number of subscribers.
 */
import type { Server } from "bun";

export interface ChannelMessage {
  type: string;
  channel: string;
  [field: string]: unknown;
}

export class EventHub {
  private server: Server<unknown> | null = null;

  attach(server: Server<unknown>): void {
    this.server = server;
  }

  /**
   * Whether any client is subscribed to `channel`: a message costly to compose (a batch's live
   * counts read every session item) is skipped when nobody would receive it.
   */
  listened(channel: string): boolean {
    return (this.server?.subscriberCount(channel) ?? 0) > 0;
  }

  publish(channel: string, type: string, data: Record<string, unknown>): void {
    const message: ChannelMessage = { type, channel, ...data, sent_at: new Date().toISOString() };
    this.server?.publish(channel, JSON.stringify(message));
  }
}
