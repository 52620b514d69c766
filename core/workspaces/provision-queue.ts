/**
 * The provisioning queue: a fair FIFO of worktrees waiting for their heavy phases. Admission, in
 * arrival order, takes the first waiting job whose repository is under its cap, while
 * - fewer than `provisionConcurrency` jobs run (0 = no cap),
 * - its repository runs fewer than its `provisionConcurrencyByRepo` cap (never looser than the
 *   global cap; a job whose repository is full keeps its place, later jobs of other repositories
 *   may pass it), and
 * - with `provisionLoadFactor` > 0, the 1-minute load average is at most cores x factor, unless
 *   nothing runs (an idle queue always admits one).
 * The caps are read at every admission, so a config change applies at the next one. A failed job
 * frees its slot like a finished one: nothing else waits on it.
 */
export interface LoadProbe {
  /** The 1-minute load average. */
  load1(): number;
  cores(): number;
}

export interface QueueCaps {
  global: number;
  /** The repository's own cap (`worktrees.provisionConcurrencyByRepo`, see config's provisionCapFor), if any. */
  repoCap(repo: string): number | undefined;
  loadFactor: number;
}

export type ProvisionState = "queued" | "running" | "done" | "failed";

export interface ProvisioningView {
  state: ProvisionState;
  /** 1-based place among the waiting jobs (queued only). */
  position?: number;
  /** The phase running (running), or the one that failed (failed). */
  phase?: string;
}

interface Job {
  id: string;
  repo: string;
  state: ProvisionState;
  phase?: string;
  run: (setPhase: (phase: string) => void) => Promise<void>;
  settle: { resolve: () => void; reject: (err: unknown) => void };
}

const RECHECK_MS = 1000;

/** The cap for `repo`: the global cap, tightened (never loosened) by the repository's own cap. 0 = none. */
export function capFor(repo: string, caps: QueueCaps): number {
  const global = caps.global > 0 ? caps.global : Infinity;
  const own = caps.repoCap(repo);
  return own !== undefined && own > 0 ? Math.min(global, own) : global;
}

export class ProvisionQueue {
  private readonly waiting: Job[] = [];
  private readonly running = new Map<string, Job>();
  private readonly finished = new Map<string, Job>();
  private recheck?: NodeJS.Timeout;
  /** Admitted job ids in admission order (the bench reads fairness from it). */
  readonly admitted: string[] = [];

  constructor(
    private readonly caps: () => QueueCaps,
    private readonly load: LoadProbe,
  ) {}

  /** Queues `run`; the promise settles when it has run (or failed). */
  submit(id: string, repo: string, run: Job["run"]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ id, repo, state: "queued", run, settle: { resolve, reject } });
      this.pump();
    });
  }

  view(id: string): ProvisioningView | undefined {
    const i = this.waiting.findIndex((j) => j.id === id);
    if (i >= 0) return { state: "queued", position: i + 1 };
    const j = this.running.get(id) ?? this.finished.get(id);
    if (!j) return undefined;
    return { state: j.state, ...(j.phase ? { phase: j.phase } : {}) };
  }

  /** Takes a waiting job out of the queue (its session was stopped); it settles with `reason`. A running job is left to finish. */
  cancel(id: string, reason: Error): boolean {
    const i = this.waiting.findIndex((j) => j.id === id);
    if (i < 0) return false;
    const [job] = this.waiting.splice(i, 1);
    job!.state = "failed";
    this.finished.set(id, job!);
    job!.settle.reject(reason);
    return true;
  }

  get stats(): { waiting: number; running: number } {
    return { waiting: this.waiting.length, running: this.running.size };
  }

  /** Admits whatever may run now. Called on submit, on every finish, on config changes and on a timer while the load guard holds. */
  pump(): void {
    clearTimeout(this.recheck);
    this.recheck = undefined;
    const caps = this.caps();
    const global = caps.global > 0 ? caps.global : Infinity;
    for (let i = 0; i < this.waiting.length && this.running.size < global; ) {
      if (this.overloaded(caps)) {
        this.recheck = setTimeout(() => this.pump(), RECHECK_MS);
        this.recheck.unref();
        return;
      }
      const job = this.waiting[i]!;
      const sameRepo = [...this.running.values()].filter((j) => j.repo === job.repo).length;
      if (sameRepo >= capFor(job.repo, caps)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.start(job);
    }
  }

  private overloaded(caps: QueueCaps): boolean {
    if (!(caps.loadFactor > 0) || this.running.size === 0) return false;
    return this.load.load1() > this.load.cores() * caps.loadFactor;
  }

  private start(job: Job): void {
    job.state = "running";
    this.running.set(job.id, job);
    this.admitted.push(job.id);
    if (this.admitted.length > 10_000) this.admitted.splice(0, 5_000);
    job
      .run((phase) => (job.phase = phase))
      .then(
        () => {
          job.state = "done";
          job.phase = undefined;
          job.settle.resolve();
        },
        (err) => {
          job.state = "failed";
          job.settle.reject(err);
        },
      )
      .finally(() => {
        this.running.delete(job.id);
        this.finished.set(job.id, job);
        if (this.finished.size > 1000) this.finished.delete(this.finished.keys().next().value!);
        this.pump();
      });
  }

  stop(): void {
    clearTimeout(this.recheck);
  }
}
