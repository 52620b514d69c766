/**
 * The size of a kill -9 storm: `npm test` runs each storm at a size that still kills daemons in
 * the middle of their work many times (the property under test) but fits a laptop's suite;
 * `SVC_FULL_STORMS=1` runs the sizes the storms had before, several times longer, for a release
 * or after a change to the outbox, the journal or team mode.
 */
export function stormSize(everyRun: number, full: number): number {
  return process.env.SVC_FULL_STORMS === "1" ? full : everyRun;
}
