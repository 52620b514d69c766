/**
 * What the session runtime asks of workspaces at every spawn: where the session runs (a new or
 * inherited worktree, or plain), its provisioning through the queue, its caller identity
 * (lineage tokens), its idempotency key and its PATH shim. One per daemon.
 */
import { stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { inject, injectable } from "tsyringe";
import type { ConfigService } from "../config/config-service.js";
import { provisionCapFor } from "../config/local-paths.js";
import { SvcError } from "../errors.js";
import type { Clock, Random } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import { CLOCK, CONFIG, HOME, LOAD_PROBE, LOGGER, RANDOM, token } from "../tokens.js";
import { findRepo } from "./git.js";
import type { Provenance } from "./gh-footer.js";
import { SpawnKeys } from "./idempotency.js";
import { decidePlacement } from "./isolation.js";
import { autoSlug, checkSlug, worktreeRoot } from "./layout.js";
import { SessionTokens } from "./lineage.js";
import { provisionPlan, type ProvisionPlan } from "./provision-file.js";
import { ProvisionQueue, type LoadProbe, type ProvisioningView } from "./provision-queue.js";
import { runProvision } from "./provision-run.js";
import { WorktreeRecords } from "./records.js";
import { removeShimDir, writeShimDir } from "./shim-dir.js";
import { addWorktree, type WorktreeInfo } from "./worktrees.js";

export interface PlaceInput {
  sessionId: string;
  cwd: string;
  worktree?: string | true;
  /** A `--root` over the resolved `worktrees.root`. */
  root?: string;
  label?: string;
  adapter: string;
  parent?: { cwd: string; worktree?: WorktreeInfo };
  /** The live session using the tree at `path` as its own, if any. */
  usedBy(path: string): string | undefined;
}

export interface Placed {
  cwd: string;
  worktree?: WorktreeInfo;
  /** Heavy phases to queue before the agent starts. */
  provision?: { plan: ProvisionPlan; source: string };
}

export type ProvisioningDetail = ProvisioningView & { command?: string; outputTail?: string };

export const isInside = (path: string, dir: string) =>
  path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/** Workspaces (core/workspaces): worktrees, the provisioning queue, lineage tokens, spawn keys, the gh shim. */
export const WORKSPACES = token<WorkspaceService>("workspaces");

@injectable()
export class WorkspaceService {
  readonly tokens = new SessionTokens();
  readonly keys = new SpawnKeys();
  readonly records: WorktreeRecords;
  readonly queue: ProvisionQueue;
  private readonly failures = new Map<string, ProvisioningDetail>();
  private readonly running = new Map<string, AbortController>();
  /** Tree path → the session it is being placed for, until that session ends. */
  private readonly placing = new Map<string, string>();

  constructor(
    @inject(CONFIG) private readonly config: ConfigService,
    @inject(HOME) private readonly home: string,
    @inject(LOAD_PROBE) load: LoadProbe,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(LOGGER) private readonly logger: Logger,
    @inject(RANDOM) private readonly random: Random,
  ) {
    this.records = new WorktreeRecords(home);
    this.queue = new ProvisionQueue(() => {
      const cfg = this.config.current().effective;
      return {
        global: cfg.worktrees.provisionConcurrency,
        repoCap: (repo) => provisionCapFor(cfg, repo),
        loadFactor: cfg.worktrees.provisionLoadFactor,
      };
    }, load);
    this.config.onChange(() => this.queue.pump());
  }

  private cfg() {
    return this.config.current();
  }

  /** Decides where a spawn runs and creates its worktree (the cheap `git worktree add`, never queued). */
  async place(input: PlaceInput): Promise<Placed> {
    const { effective, sources } = this.cfg();
    const parentTree = input.parent?.worktree;
    const placement = decidePlacement(effective.worktrees.isolation, sources["worktrees.isolation"], input.worktree, {
      hasParent: input.parent !== undefined,
      inParentTree: parentTree !== undefined && isInside(input.cwd, parentTree.path),
    });
    if (placement.kind === "plain") return { cwd: input.cwd };
    if (placement.kind === "inherit") return { cwd: input.cwd, worktree: parentTree! };
    const repo = await findRepo(input.cwd);
    if (!repo) {
      if (placement.explicit)
        throw new SvcError(
          "invalid_input",
          `a worktree was asked for, but cwd ${input.cwd} is not inside a git repository`,
        );
      return { cwd: input.cwd };
    }
    const slug =
      placement.slug !== undefined
        ? checkSlug(placement.slug)
        : autoSlug(input.label ?? input.adapter, input.sessionId);
    const root = worktreeRoot(effective.worktrees.root, input.root, input.cwd);
    if (isInside(root, repo.top) && !isInside(root, join(repo.top, ".git"))) {
      this.logger.warn("the worktree root lies inside the repository; git will show the trees as untracked files", {
        root,
        repo: repo.repo,
      });
    }
    const existing = join(root, repo.repoName, slug);
    // A tree being placed for a session not yet registered counts as in use, so two spawns of one slug at once do not both take it.
    const user = input.usedBy(existing) ?? this.placing.get(existing);
    if (user)
      throw new SvcError(
        "conflict",
        `worktree ${slug} (${existing}) is in use by live session ${user}; choose another slug`,
      );
    this.placing.set(existing, input.sessionId);
    let added;
    try {
      added = await addWorktree({
        repo,
        root,
        slug,
        records: this.records,
        sessionId: input.sessionId,
        now: this.clock.now(),
        markerId: this.random.hex(16),
        warn: (message, fields) => this.logger.warn(message, fields),
      });
    } catch (err) {
      this.placing.delete(existing);
      throw err;
    }
    const { info, reused } = added;
    const rel = relative(repo.top, input.cwd);
    const sub = rel && !rel.startsWith("..") ? join(info.path, rel) : info.path;
    const cwd = (await stat(sub).catch(() => undefined))?.isDirectory() ? sub : info.path;
    this.logger.info("worktree ready", { sessionId: input.sessionId, path: info.path, branch: info.branch, reused });
    const plan = reused ? undefined : await provisionPlan(repo.top, info.path);
    return { cwd, worktree: info, ...(plan ? { provision: { plan, source: repo.top } } : {}) };
  }

  /** Queues the heavy phases; settles when they ran. A failure is kept for the descriptor. */
  async provision(sessionId: string, tree: WorktreeInfo, p: NonNullable<Placed["provision"]>): Promise<void> {
    let phase = "";
    const abort = new AbortController();
    this.running.set(sessionId, abort);
    try {
      await this.queue.submit(sessionId, tree.repo, (setPhase) =>
        runProvision(
          p.plan,
          p.source,
          tree.path,
          (ph) => {
            phase = ph;
            setPhase(ph);
          },
          abort.signal,
        ),
      );
      await this.records.patch(tree.path, { provisioning: { state: "done" } });
    } catch (err) {
      const d = (err as SvcError).details as { phase?: string; command?: string; outputTail?: string } | undefined;
      const failedIn = d?.phase ?? (phase || undefined);
      this.failures.set(sessionId, {
        state: "failed",
        ...(failedIn ? { phase: failedIn } : {}),
        ...(d?.command ? { command: d.command } : {}),
        ...(d?.outputTail ? { outputTail: d.outputTail } : {}),
      });
      if (this.failures.size > 1000) this.failures.delete(this.failures.keys().next().value!);
      await this.records
        .patch(tree.path, {
          provisioning: {
            state: "failed",
            ...(failedIn ? { phase: failedIn } : {}),
            ...(d?.command ? { command: d.command } : {}),
          },
        })
        .catch(() => undefined);
      throw err;
    } finally {
      this.running.delete(sessionId);
    }
  }

  /** The session was stopped before its agent started: out of the queue, or its running phase's commands killed. */
  cancel(sessionId: string, reason: Error): void {
    if (!this.queue.cancel(sessionId, reason)) this.running.get(sessionId)?.abort(reason);
  }

  provisioning(sessionId: string): ProvisioningDetail | undefined {
    return this.failures.get(sessionId) ?? this.queue.view(sessionId);
  }

  /** With `provenance.wrapGh`, the session's shim directory (first on its PATH). */
  async shim(p: Provenance): Promise<string | undefined> {
    if (!this.cfg().effective.provenance.wrapGh) return undefined;
    return writeShimDir(this.home, p);
  }

  /** The session's start failed before it was registered (or it ended): its tree is free again. */
  released(sessionId: string): void {
    for (const [path, id] of this.placing) if (id === sessionId) this.placing.delete(path);
  }

  /**
   * Session `to` continues `from` in the tree at `path` (contextContinuity): the tree stays guarded
   * for `to` after `from` ends, and its record names `to`. Nothing on disk moves.
   */
  handOver(path: string, from: string, to: string): void {
    if (this.placing.get(path) === from) this.placing.set(path, to);
    this.records
      .patch(path, { sessionId: to })
      .catch((err: Error) =>
        this.logger.warn("could not record a worktree's new session", { path, sessionId: to, error: err.message }),
      );
  }

  async ended(sessionId: string): Promise<void> {
    this.released(sessionId);
    this.tokens.revoke(sessionId);
    this.keys.release(sessionId);
    await removeShimDir(this.home, sessionId).catch(() => undefined);
  }

  stop(): void {
    this.queue.stop();
  }
}
