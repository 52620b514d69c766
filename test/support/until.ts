/**
 * Waits on a condition, never on wall time alone: polls `probe` until it gives a value, or fails
 * naming `what`. The timeout is a guard against a hang, not a speed check: a busy machine (two
 * suites at once on 2 cores) may take many seconds for what takes milliseconds when quiet.
 */
export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
