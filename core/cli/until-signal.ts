/**
 * Foreground servers (`serve`, `relay serve`, `pair page`) and followers (`sessions follow`): run
 * until SIGINT/SIGTERM, then `stop`. With `done`, also until it settles (the work ended by itself):
 * then the signal handlers are removed and `stop` is not called.
 */
export function untilSignal(stop: () => Promise<void>, done?: Promise<unknown>): Promise<void> {
  return new Promise<void>((resolve) => {
    const off = () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    };
    let stopping = false;
    const onSignal = () => {
      off();
      stopping = true;
      void stop().then(resolve, resolve);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    const ended = () => {
      if (stopping) return; // `stop` resolves it
      off();
      resolve();
    };
    done?.then(ended, ended);
  });
}
