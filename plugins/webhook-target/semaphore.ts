/** A counting semaphore: at most `limit` holders; waiters are served first come, first served. */
export class Semaphore {
  private held = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async acquire(): Promise<() => void> {
    if (this.held < this.limit) this.held++;
    else await new Promise<void>((resolve) => this.waiters.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.held--;
    };
  }

  get busy(): boolean {
    return this.held > 0 || this.waiters.length > 0;
  }
}
