/**
 * Counting semaphores that hold across processes sharing one database: at most `limit` slots of
 * a scope (an organization's uploads, an organization's fetches from one host) in use at once,
 * whichever process holds them. A slot is a row of slot_leases; taking one deletes the scope's
 * lapsed rows, counts the rest and inserts, under a transaction lock named after the scope, so
 * two processes cannot both take the last one. The holder refreshes its lease while it works; a
 * process that dies frees its slots when their leases lapse.
 */
import type { Clock } from "../clock.ts";
import type { SqlClient } from "./sql-client.ts";

export interface LeaseTimes {
  /** How long a slot outlives its holder's last refresh. */
  leaseMs: number;
  refreshEveryMs: number;
}

export const DEFAULT_LEASE_TIMES: LeaseTimes = { leaseMs: 120_000, refreshEveryMs: 30_000 };

export interface HeldSlot {
  /** Frees the slot (a release that fails leaves the lease to lapse). */
  release(): Promise<void>;
}

export class SlotLeases {
  constructor(
    private readonly sql: SqlClient,
    private readonly clock: Clock,
    private readonly times: LeaseTimes = DEFAULT_LEASE_TIMES,
  ) {}

  /** One of `scope`'s `limit` slots, or how many are in use when none is free. */
  async tryTake(scope: string, limit: number): Promise<HeldSlot | { inUse: number }> {
    const id = crypto.randomUUID();
    const inUse = await this.sql.transaction(async (tx) => {
      // The lock's name must be an identifier; the scope may hold any characters (a host name).
      await tx.one(tx.dialect.transactionLock(`slots_${Bun.hash(scope).toString(16)}`));
      const now = this.clock.now();
      await tx.run("DELETE FROM slot_leases WHERE scope = ? AND expires_at <= ?", [scope, now]);
      const n = Number((await tx.one<{ n: number | string }>("SELECT count(*) AS n FROM slot_leases WHERE scope = ?", [scope]))!.n);
      if (n >= limit) return n;
      await tx.run("INSERT INTO slot_leases (id, scope, expires_at) VALUES (?, ?, ?)", [id, scope, now + this.times.leaseMs]);
      return null;
    });
    if (inUse !== null) return { inUse };
    // A failed refresh is retried at the next tick; the lease outlives several.
    const refresh = setInterval(() => {
      this.sql.run("UPDATE slot_leases SET expires_at = ? WHERE id = ?", [this.clock.now() + this.times.leaseMs, id]).catch(() => {});
    }, this.times.refreshEveryMs);
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(refresh);
        await this.sql.run("DELETE FROM slot_leases WHERE id = ?", [id]).catch(() => {});
      },
    };
  }

  /** Slots of `scope` held now, lapsed ones not counted. */
  async inUse(scope: string): Promise<number> {
    return Number((await this.sql.one<{ n: number | string }>("SELECT count(*) AS n FROM slot_leases WHERE scope = ? AND expires_at > ?", [scope, this.clock.now()]))!.n);
  }
}
