/** Reconnect delays: 250 ms doubling to a cap, with ±20 % jitter so many links do not retry in step. */
export function backoffDelay(attempt: number, capMs = 15_000, random: () => number = Math.random): number {
  const base = Math.min(capMs, 250 * 2 ** Math.min(attempt, 16));
  return Math.round(base * (0.8 + 0.4 * random()));
}
