/**
 * Keeps V8's young generation at its initial size while the daemon starts. Start-up allocates
 * a lot of short-lived objects (module loading, config and sentinel parsing), and V8 answers by
 * doubling the two semi-spaces up to 16 MiB each, which an idle daemon then keeps: about 30 MiB
 * of RSS for nothing. With the growth factor at 1 during start the young generation stays at
 * 1 MiB per semi-space; once started the default comes back, so a daemon under load grows its
 * young generation as V8 chooses (throughput is unchanged). A `--semi-space-growth-factor` or
 * semi-space size given to node by the user (execArgv, NODE_OPTIONS) is left alone.
 */
import { setFlagsFromString } from "node:v8";

/** V8's default `--semi-space-growth-factor`. */
const DEFAULT_GROWTH_FACTOR = 2;

let held = false;

function userSetsYoungGeneration(): boolean {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)];
  return given.some((a) => /^--(max-|min-)?semi[-_]space[-_]/.test(a));
}

/** Call before the daemon's modules load. */
export function holdYoungGeneration(): void {
  if (held || userSetsYoungGeneration()) return;
  setFlagsFromString("--semi-space-growth-factor=1");
  held = true;
}

/** Call once the daemon has started: V8's default growth again. */
export function releaseYoungGeneration(): void {
  if (!held) return;
  setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
  held = false;
}
