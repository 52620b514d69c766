/**
 * Sessions between their id being chosen and their registration in the runtime (their worktree is
 * being placed, which awaits git). A spawn whose idempotency key such a session holds waits here
 * for it, instead of taking the key for free because the session is not listed yet.
 */
export class StartingSessions<T> {
  private readonly pending = new Map<string, Promise<T | undefined>>();

  /** Marks `id` as starting; `settle` with the registered session, or undefined when its start failed. */
  open(id: string): { settle(value: T | undefined): void } {
    let settle!: (value: T | undefined) => void;
    this.pending.set(id, new Promise<T | undefined>((resolve) => (settle = resolve)));
    return {
      settle: (value) => {
        this.pending.delete(id);
        settle(value);
      },
    };
  }

  has(id: string): boolean {
    return this.pending.has(id);
  }

  /** The session `id` becomes once registered (undefined if it failed, or is not starting). */
  async wait(id: string): Promise<T | undefined> {
    return this.pending.get(id);
  }
}
