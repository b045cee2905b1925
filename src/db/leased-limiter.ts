/**
 * At most N tasks at once per key across every process sharing the database (the crawler's
 * politeness per organization and host on a shared deployment). The process's own tasks queue
 * in a KeyedLimiter first (arrival order, no database traffic while the process alone is at the
 * limit); the one at the head then waits for a slot lease (slot-leases.ts), asking again with a
 * growing pause while the other processes hold them all.
 */
import { KeyedLimiter, type TaskLimiter } from "../keyed-limiter.ts";
import type { SlotLeases } from "./slot-leases.ts";

const FIRST_PAUSE_MS = 100;
const MAX_PAUSE_MS = 2_000;

export class LeasedLimiter implements TaskLimiter {
  private readonly local: KeyedLimiter;

  /** `scope` names the slots of a key (`link <key>`), so limiters of different kinds never share them. */
  constructor(
    private readonly leases: SlotLeases,
    private readonly perKey: number,
    private readonly scope: (key: string) => string,
  ) {
    this.local = new KeyedLimiter(perKey);
  }

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    return this.local.run(key, async () => {
      const scope = this.scope(key);
      let pause = FIRST_PAUSE_MS;
      for (;;) {
        const taken = await this.leases.tryTake(scope, this.perKey);
        if (!("inUse" in taken)) {
          try {
            return await work();
          } finally {
            await taken.release();
          }
        }
        await Bun.sleep(pause);
        pause = Math.min(MAX_PAUSE_MS, pause * 2);
      }
    });
  }
}
