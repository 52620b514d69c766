/**
 * Runs a reload one at a time, so that the last render is always the newest answer: two reloads
 * side by side can be answered out of order, and the older answer would then be drawn last and
 * stay until the next event. A call made while a reload runs is served by one more reload that
 * starts after it; calls made meanwhile share that one. A reload still unanswered after
 * `patienceMs` (a request lost on a link that stayed open) no longer holds the next one back.
 */
export function oneLoadAtATime(
  run: () => Promise<void>,
  o: { patienceMs?: number; now?: () => number } = {},
): () => Promise<void> {
  const patienceMs = o.patienceMs ?? 30_000;
  const now = o.now ?? Date.now;
  let current: { done: Promise<void>; since: number } | undefined;
  let next: Promise<void> | undefined;
  const start = (): Promise<void> => {
    const done = run().finally(() => {
      if (current?.done === done) current = undefined;
    });
    current = { done, since: now() };
    return done;
  };
  // Bumped when a reload starts without waiting: a call queued before it is served by it.
  let generation = 0;
  return () => {
    if (!current || now() - current.since >= patienceMs) {
      generation++;
      next = undefined;
      return start();
    }
    if (!next) {
      const mine = generation;
      next = current.done
        .catch(() => undefined)
        .then(() => {
          if (mine !== generation) return;
          next = undefined;
          return start();
        });
    }
    return next;
  };
}
