/**
 * The source of "now" for everything that stores or compares time, so tests can move time
 * (rate-limit windows, job backoff, retention) without sleeping.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests advance by hand. */
export class ManualClock implements Clock {
  constructor(private ms: number = Date.now()) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export function isoAt(ms: number): string {
  return new Date(ms).toISOString();
}
