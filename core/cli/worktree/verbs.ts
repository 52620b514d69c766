import { readEffectiveConfig } from "../../config/read-effective.js";
import type { SvcError } from "../../errors.js";
import type { SessionDescriptor } from "../../sessions/types.js";
import { svcHome } from "../../storage/paths.js";
import { inventory, type Inventory } from "../../workspaces/inventory.js";
import { worktreeRoot } from "../../workspaces/layout.js";
import { archiveTree, formatAge, gc, pick, removeTree, type GcAction } from "../../workspaces/reclaim.js";
import { DaemonClient } from "../daemon-client.js";
import { parseDurationFlag } from "../duration.js";
import { OLDER_THAN_FLAG } from "../duration-flags.js";
import { printJson, printTable, println } from "../output.js";

/** Worktree path → live session, from the running daemon (none without one). */
async function liveTrees(): Promise<Map<string, string>> {
  const client = await DaemonClient.connect().catch((err: SvcError) => {
    if (err.code === "daemon_not_running") return undefined;
    throw err;
  });
  const live = new Map<string, string>();
  if (!client) return live;
  const { sessions } = await client.request<{ sessions: SessionDescriptor[] }>("GET", "/sessions");
  for (const s of sessions)
    if (s.state !== "ended" && s.worktree && !live.has(s.worktree.path)) live.set(s.worktree.path, s.id);
  return live;
}

/** The inventory; its warnings (damage in svc's records) go to stderr, so they are never silent. */
async function rows(rootFlag?: string, sizes = true): Promise<Inventory> {
  const { effective } = await readEffectiveConfig();
  const roots = [effective.worktrees.root, ...(rootFlag ? [worktreeRoot(effective.worktrees.root, rootFlag)] : [])];
  const inv = await inventory({ home: svcHome(), roots, live: await liveTrees(), now: Date.now(), sizes });
  for (const w of inv.warnings) process.stderr.write(`warning: ${w}\n`);
  return inv;
}

export function formatSize(bytes: number | undefined): string {
  if (bytes === undefined) return "-";
  const units = ["B", "KiB", "MiB", "GiB"];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) (v /= 1024), i++;
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

export async function worktreeLs(opts: { root?: string; json?: boolean }): Promise<void> {
  const { rows: list, warnings } = await rows(opts.root);
  if (opts.json) return printJson({ worktrees: list, ...(warnings.length ? { warnings } : {}) });
  if (list.length === 0) return println("no worktrees");
  printTable(
    ["REPO", "SLUG", "BRANCH", "SESSION", "STATE", "CHANGES", "AGE", "SIZE", "PATH"],
    list.map((r) => [
      r.repoName,
      r.slug,
      r.branch ?? "-",
      r.session ?? "-",
      r.state,
      r.dirty === undefined ? "-" : r.dirty ? "dirty" : "clean",
      formatAge(r.ageMs),
      formatSize(r.sizeBytes),
      r.path,
    ]),
  );
}

export async function worktreeRm(target: string, opts: { force?: boolean; json?: boolean }): Promise<void> {
  const row = pick((await rows(undefined, false)).rows, target);
  const done = await removeTree(svcHome(), row, { force: opts.force === true });
  if (opts.json) return printJson({ removed: done });
  if (row.state === "missing") return println(`dropped the record of ${done.path} (its directory was already gone)`);
  println(`removed ${done.path}`);
  if (done.branch)
    println(
      done.branchDeleted
        ? `deleted branch ${done.branch} (it held no commits beyond its base)`
        : `kept branch ${done.branch} (it holds commits beyond its base, or svc did not make it for this tree)`,
    );
}

export async function worktreeArchive(target: string, opts: { force?: boolean; json?: boolean }): Promise<void> {
  const row = pick((await rows(undefined, false)).rows, target);
  const done = await archiveTree(svcHome(), row, { force: opts.force === true });
  if (opts.json) return printJson({ archived: done });
  println(
    done.commit
      ? `committed the uncommitted work as ${done.commit.slice(0, 12)} on ${done.branch}`
      : `nothing uncommitted; ${done.branch} already holds the work`,
  );
  println(`removed ${done.path}`);
  println(`to get it back: ${done.restore}`);
}

const VERB: Record<GcAction["action"], [done: string, planned: string]> = {
  removed: ["removed", "would remove"],
  "record-dropped": ["dropped the record of", "would drop the record of"],
  left: ["left", "would leave"],
};

export async function worktreeGc(opts: {
  olderThan: string;
  dryRun?: boolean;
  root?: string;
  json?: boolean;
}): Promise<void> {
  const olderThanMs = parseDurationFlag(opts.olderThan, OLDER_THAN_FLAG);
  const dryRun = opts.dryRun === true;
  const { rows: list, warnings } = await rows(opts.root, false);
  const out = await gc(svcHome(), list, { olderThanMs, dryRun });
  if (out.actions.some((a) => a.failed)) process.exitCode = 1;
  if (opts.json) return printJson({ dryRun, ...out, ...(warnings.length ? { warnings } : {}) });
  if (out.actions.length === 0) println("no worktrees");
  for (const a of out.actions) println(`${VERB[a.action][dryRun ? 1 : 0]}: ${a.path} (${a.state}; ${a.reason})`);
  if (out.pruned.length) println(`dropped git's entries for ${out.pruned.join(", ")}`);
  const count = (k: GcAction["action"]) => out.actions.filter((a) => a.action === k).length;
  println(
    `${dryRun ? "dry run: would remove" : "removed"} ${count("removed")}, ${dryRun ? "drop" : "dropped"} ${count("record-dropped")} record(s), ${dryRun ? "leave" : "left"} ${count("left")}`,
  );
}
