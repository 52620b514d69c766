/**
 * Issue 22: `svc worktree gc|rm|archive` must delete nothing of the user's. Only a path svc's
 * records say it made AND git lists as a linked worktree of the recorded repo (or that carries
 * svc's `.svc-worktree` marker with the record's id) is svc's; everything else is "not svc's"
 * and left. Real CLI, no daemon (the worktree verbs run in the CLI itself).
 */
import { lstat, mkdir, readdir, readFile, readlink, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, type CliResult } from "../support/cli.js";
import { sealRecord, type WorktreeRecord } from "../../core/workspaces/records.js";
import { sh, tempDir } from "../core/workspaces/support.js";

const LONG_AGO = new Date(Date.now() - 30 * 86_400_000);

/** Every path under `root` (symlinks not followed, `.git` not entered) with its content or target. */
async function snapshot(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (p: string, rel: string): Promise<void> => {
    const s = await lstat(p).catch(() => undefined);
    if (!s) return;
    if (s.isSymbolicLink()) out[rel] = `symlink -> ${await readlink(p)}`;
    else if (s.isDirectory()) {
      out[rel] = "dir";
      if (basename(p) === ".git") return;
      for (const n of (await readdir(p)).sort()) await walk(join(p, n), `${rel}/${n}`);
    } else out[rel] = `file: ${await readFile(p, "utf8")}`;
  };
  await walk(root, ".");
  return out;
}

/** Sets every directory and file under `root` (not inside `.git`, symlinks not followed) 30 days back. */
async function age(root: string): Promise<void> {
  const s = await lstat(root).catch(() => undefined);
  if (!s || s.isSymbolicLink()) return;
  if (s.isDirectory() && basename(root) !== ".git") for (const n of await readdir(root)) await age(join(root, n));
  await utimes(root, LONG_AGO, LONG_AGO);
}

async function put(base: string, files: Record<string, string>): Promise<void> {
  for (const [f, text] of Object.entries(files)) {
    await mkdir(dirname(join(base, f)), { recursive: true });
    await writeFile(join(base, f), text);
  }
}

/** The reproduction of issue 22 under `parent`: `proj` (src, docs committed; build untracked; empty notes) and a plain `notes/2024`. */
async function userLayout(parent: string): Promise<{ proj: string; seen: string[] }> {
  const proj = join(parent, "proj");
  await put(proj, { "src/main.c": "c\n", "docs/a.md": "d\n", "build/o": "o\n" });
  await mkdir(join(proj, "notes"));
  sh(proj, "init", "-q", "-b", "main");
  sh(proj, "add", "src", "docs");
  sh(proj, "commit", "-q", "-m", "init");
  await put(parent, { "notes/2024/plan.txt": "plan\n" });
  return {
    proj,
    seen: [...["src", "docs", "build", "notes"].map((d) => join(proj, d)), join(parent, "notes", "2024")],
  };
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
const samePath = (a: string, b: string) => a === b || real(a) === real(b);
const under = (p: string, area: string) => [area, real(area)].some((a) => p === a || p.startsWith(a + "/"));

// ---- The gc output shape, in one place (docs/workspaces.md, "Worktrees"). Soft, so a run goes on
// to show what was deleted. A folder that a record names but that is not svc's may instead have
// its stale record dropped ("record-dropped", `dropped the record of:`): no file is touched. ----
interface GcAction {
  path: string;
  slug: string;
  state: string;
  action: "removed" | "record-dropped" | "left";
  reason: string;
}
const LINE = {
  left: ["left:", "would leave:"],
  dropped: ["dropped the record of:", "would drop the record of:"],
  removed: ["removed:", "would remove:"],
};

/** JSON `{dryRun, actions: [{path, slug, state, action, reason}], pruned, warnings?}`: every seen folder is left, nothing under the user's areas removed. */
function expectJsonLeaves(r: CliResult, dryRun: boolean, seen: string[], areas: string[], recorded: string[]): void {
  const out = JSON.parse(r.stdout) as { dryRun: boolean; actions: GcAction[]; pruned: string[] };
  expect.soft(out.dryRun).toBe(dryRun);
  expect.soft(Array.isArray(out.actions)).toBe(true);
  const actions = Array.isArray(out.actions) ? out.actions : [];
  for (const p of seen) {
    const ok = recorded.some((q) => samePath(p, q)) ? ["left", "record-dropped"] : ["left"];
    expect.soft(ok, `gc --json on ${p}: ${r.stdout}`).toContain(actions.find((x) => samePath(x.path, p))?.action);
  }
  const removed = actions.filter((a) => a.action === "removed" && areas.some((u) => under(a.path, u)));
  expect.soft(removed, r.stdout).toEqual([]);
}

/** Text: a line `left: <path> …` (`would leave:` in a dry run) for every seen folder; no `removed:` line for a path in the user's areas. */
function expectTextLeaves(r: CliResult, dryRun: boolean, seen: string[], areas: string[], recorded: string[]): void {
  const lines = r.stdout.split("\n");
  const names = (l: string, p: string) =>
    [p, real(p)].some((q) => new RegExp(`: ${q.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?=[\\s)]|$)`).test(l));
  for (const p of seen) {
    const heads = [
      LINE.left[dryRun ? 1 : 0]!,
      ...(recorded.some((q) => samePath(p, q)) ? [LINE.dropped[dryRun ? 1 : 0]!] : []),
    ];
    const hit = lines.some((l) => heads.some((h) => l.startsWith(h)) && names(l, p));
    expect.soft(hit, `no "${heads.join(" / ")} ${p}" line in:\n${r.stdout}${r.stderr}`).toBe(true);
  }
  const removed = lines.filter(
    (l) => LINE.removed.some((h) => l.startsWith(h)) && areas.some((u) => l.includes(u) || l.includes(real(u))),
  );
  expect.soft(removed, r.stdout).toEqual([]);
}

// ---- Fixtures and runners ----
const made: string[] = [];
afterEach(async () => {
  for (const d of made.splice(0)) await rm(d, { recursive: true, force: true });
});

async function sandbox(): Promise<{ t: string; home: string; code: string }> {
  const t = await tempDir("svc-reclaim-safety-");
  made.push(t);
  const home = join(t, "home");
  const code = join(t, "code");
  await mkdir(home, { recursive: true });
  await mkdir(code, { recursive: true });
  return { t, home, code };
}

interface Scene {
  home: string;
  cwd: string;
  /** The user's directories: their full contents must survive every run. */
  areas: string[];
  /** The user's repositories: HEAD must not move. */
  repos: string[];
}

async function userState(s: Scene): Promise<unknown> {
  return {
    trees: await Promise.all(s.areas.map(snapshot)),
    heads: s.repos.map((r) => sh(r, "rev-parse", "HEAD").trim()),
  };
}

const cli = (s: Scene, args: string[], env?: NodeJS.ProcessEnv) =>
  runCli(args, { home: s.home, cwd: s.cwd, ...(env ? { env } : {}), timeoutMs: 50_000 });

/**
 * `gc --dry-run --older-than 0m`, the default `gc` (7d) and `gc --older-than 0m`, each with and
 * without --json, everything aged 30 days first: nothing of the user's changes.
 */
async function gcEveryWay(
  s: Scene,
  opts: {
    extra?: string[];
    env?: NodeJS.ProcessEnv;
    seen: string[];
    recorded?: string[];
    damaged?: boolean;
    prepare?: () => Promise<unknown>;
  },
): Promise<void> {
  const before = await userState(s);
  for (const variant of [["--dry-run", "--older-than", "0m"], [], ["--older-than", "0m"]]) {
    for (const json of [true, false]) {
      await opts.prepare?.();
      for (const a of s.areas) await age(a);
      const args = ["worktree", "gc", ...variant, ...(opts.extra ?? []), ...(json ? ["--json"] : [])];
      const r = await cli(s, args, opts.env);
      const said = `svc ${args.join(" ")} → ${r.code}\n${r.stdout}${r.stderr}`;
      expect(await userState(s), said).toEqual(before);
      if (opts.damaged) {
        expect([0, 1], said).toContain(r.code);
        expect.soft(r.stdout + r.stderr, said).toMatch(/worktrees\.json/);
        if (r.code !== 0) continue;
      } else expect(r.code, said).toBe(0);
      const dry = variant[0] === "--dry-run";
      if (json) expectJsonLeaves(r, dry, opts.seen, s.areas, opts.recorded ?? []);
      else expectTextLeaves(r, dry, opts.seen, s.areas, opts.recorded ?? []);
    }
  }
}

async function writeRecords(home: string, trees: Array<Record<string, unknown>>): Promise<string> {
  const text = JSON.stringify({ trees }, null, 2);
  await writeFile(join(home, "worktrees.json"), text);
  return text;
}

function record(
  code: string,
  proj: string,
  path: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const slug = basename(path);
  return {
    path,
    repo: proj,
    repoName: "proj",
    slug,
    branch: `svc/${slug}`,
    baseCommit: sh(proj, "rev-parse", "HEAD").trim(),
    root: code,
    createdAt: 0,
    ...extra,
  };
}

describe("svc worktree gc|rm|archive delete nothing of the user's (issue 22)", () => {
  it.each([["--root"], ["SVC_WORKTREES_ROOT"]])(
    "1. a folder of the user's repositories given as the root (%s): every folder survives",
    async (how) => {
      const { t, home, code } = await sandbox();
      const { proj, seen } = await userLayout(code);
      const s: Scene = { home, cwd: t, areas: [code], repos: [proj] };
      await gcEveryWay(
        s,
        how === "--root" ? { extra: ["--root", code], seen } : { env: { SVC_WORKTREES_ROOT: code }, seen },
      );
    },
    240_000,
  );

  it("2. the same layout under the default root ($SVC_HOME/worktrees): nothing deleted", async () => {
    const { t, home } = await sandbox();
    const root = join(home, "worktrees");
    const { proj, seen } = await userLayout(root);
    await gcEveryWay({ home, cwd: t, areas: [root], repos: [proj] }, { seen });
  }, 240_000);

  it("3. the user's own folders under the default root, one made by hand and one nested deeper: all survive", async () => {
    const { t, home } = await sandbox();
    const app = join(home, "worktrees", "app");
    await put(app, { "mine/readme.txt": "mine\n", "mine/sub/deep/data.txt": "deep\n", "byhand/todo.txt": "todo\n" });
    await mkdir(join(app, "mine", "sub", "empty"));
    await gcEveryWay(
      { home, cwd: t, areas: [join(home, "worktrees")], repos: [] },
      { seen: [join(app, "mine"), join(app, "byhand")] },
    );
  }, 240_000);

  it("4. symlinks into the user's files, and a root that is itself a symlink: targets, files and links survive", async () => {
    const { t, home, code } = await sandbox();
    const { proj, seen } = await userLayout(code);
    const root = join(home, "worktrees");
    await mkdir(join(root, "app"), { recursive: true });
    await symlink(proj, join(root, "app", "link"));
    await symlink(code, join(root, "linkrepo"));
    const rootLink = join(t, "rootlink");
    await symlink(code, rootLink);
    const s: Scene = { home, cwd: t, areas: [code, root, rootLink], repos: [proj] };
    await gcEveryWay(s, { seen: [] });
    await gcEveryWay(s, {
      extra: ["--root", rootLink],
      seen: seen.map((p) => join(rootLink, p.slice(code.length + 1))),
    });
  }, 240_000);

  it("5. hand-written records (no marker) naming user folders and the main checkout: gc leaves them, rm/archive refuse", async () => {
    const { t, home, code } = await sandbox();
    const { proj } = await userLayout(code);
    const named = [join(proj, "src"), proj, join(code, "notes", "2024")];
    // Written again before every run: a gc may drop such records (never the folders they name).
    const handWritten = () =>
      writeRecords(
        home,
        named.map((p) => record(code, proj, p)),
      );
    const s: Scene = { home, cwd: t, areas: [code], repos: [proj] };
    await gcEveryWay(s, { seen: named, recorded: named, prepare: handWritten });
    const before = await userState(s);
    for (const verb of ["rm", "archive"]) {
      for (const p of named) {
        await handWritten();
        const r = await cli(s, ["worktree", verb, p, "--force"]);
        const said = `svc worktree ${verb} ${p} --force → ${r.code}\n${r.stdout}${r.stderr}`;
        expect(await userState(s), said).toEqual(before);
        expect(r.code, said).toBe(1);
        expect(r.stderr, said).toMatch(/not svc's/);
      }
    }
  }, 240_000);

  it("6a. a truncated records file: gc deletes nothing and names worktrees.json", async () => {
    const { t, home, code } = await sandbox();
    const { proj } = await userLayout(code);
    const text = await writeRecords(home, [
      record(code, proj, join(proj, "src")),
      record(code, proj, join(code, "notes", "2024")),
    ]);
    // Damaged again before every run (svc may set a damaged file aside).
    const truncated = () => writeFile(join(home, "worktrees.json"), text.slice(0, Math.floor(text.length / 2)));
    const s: Scene = { home, cwd: t, areas: [code], repos: [proj] };
    await gcEveryWay(s, { seen: [], damaged: true, prepare: truncated });
    await gcEveryWay(s, { extra: ["--root", code], seen: [], damaged: true, prepare: truncated });
  }, 240_000);

  it("6b. a sealed record copied with one character of its path changed (now naming a user folder): gc deletes nothing and names worktrees.json", async () => {
    const { t, home, code } = await sandbox();
    const { proj } = await userLayout(code);
    const legit = sealRecord(
      record(code, proj, join(proj, "srk"), {
        branchCreated: true,
        sessionId: "ses_0123456789abcdefghjkmnpq",
        createdAt: Date.now() - 20 * 86_400_000,
        marker: "0123456789abcdef0123456789abcdef",
      }) as unknown as WorktreeRecord,
    ) as unknown as Record<string, unknown>;
    const s: Scene = { home, cwd: t, areas: [code], repos: [proj] };
    await gcEveryWay(s, {
      seen: [],
      damaged: true,
      prepare: () => writeRecords(home, [legit, { ...legit, path: join(proj, "src") }]),
    });
  }, 240_000);
});
