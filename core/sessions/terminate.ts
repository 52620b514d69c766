/**
 * Stopping a session's process: SIGTERM, then SIGKILL once a grace period has passed. Shared by
 * the built-in adapters (ACP agents, terminal presets) and exported to adapter packages through
 * the plugin API, so every session stop escalates the same way.
 */

/** How long a stopped session's process gets to exit on SIGTERM before it is killed. */
export const STOP_GRACE_MS = 3000;

/**
 * Sends SIGTERM through `kill`, then SIGKILL once `graceMs` has passed without the process
 * exiting, and resolves when `exited` does. `kill` says what is signalled: `(sig) => child.kill(sig)`
 * for the one process (an ACP agent, a pty), {@link groupKiller} for a whole process group. If
 * the SIGKILL cannot be sent (`kill` throws, e.g. EPERM), this rejects with that error instead of
 * waiting for an exit that will not come.
 */
export async function terminateAndWait(
  kill: (signal: NodeJS.Signals) => void,
  exited: Promise<unknown>,
  graceMs = STOP_GRACE_MS,
): Promise<void> {
  kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const killFailed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      try {
        kill("SIGKILL");
      } catch (err) {
        reject(err);
      }
    }, graceMs);
  });
  try {
    await Promise.race([exited, killFailed]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A `kill` for a child spawned `detached` (it leads its own process group): the signal goes to
 * the whole group, so background children that keep its output open go too. A group that is
 * already gone is not an error.
 */
export function groupKiller(pid: number): (signal: NodeJS.Signals) => void {
  return killerOf(-pid);
}

/** A `kill` for one process that is not this process's child (no ChildProcess to call `kill` on). A process that is already gone is not an error. */
export function processKiller(pid: number): (signal: NodeJS.Signals) => void {
  return killerOf(pid);
}

function killerOf(target: number): (signal: NodeJS.Signals) => void {
  return (signal) => {
    try {
      process.kill(target, signal);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
    }
  };
}
