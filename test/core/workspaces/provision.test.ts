import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { provisionPlan, readProvisionFile } from "../../../core/workspaces/provision-file.js";
import { until } from "../sessions/harness.js";
import { makeRepo, makeWsHarness, tempDir, type WsHarness } from "./support.js";

let h: WsHarness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** A repo whose .svc/worktree.json declares `decl` (committed), with an untracked `.env.local`. */
async function repoWith(decl: Record<string, unknown>): Promise<string> {
  const repo = await makeRepo(await tempDir(), "app", {
    ".svc/worktree.json": JSON.stringify(decl),
    "README.md": "x\n",
  });
  await writeFile(join(repo, ".env.local"), "TOKEN=dev\n");
  return repo;
}

describe("provisioning a worktree", () => {
  it("copies the globs' files, runs install then the setup hooks in the tree, then starts the agent", async () => {
    h = await makeWsHarness();
    const repo = await repoWith({
      install: "echo installed > .installed",
      copy: [".env*"],
      setup: ["cat .installed > .setup-saw", "test -f .env.local && echo ok > .env-seen"],
    });
    const { descriptor } = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "p1", prompt: "hi" });
    expect(descriptor.provisioning?.state).toMatch(/queued|running/);
    const ready = await h.runtime.ready(descriptor.id);
    expect(ready.provisioning).toEqual({ state: "done" });
    const tree = descriptor.worktree!.path;
    expect(await readFile(join(tree, ".env.local"), "utf8")).toBe("TOKEN=dev\n");
    expect(await readFile(join(tree, ".setup-saw"), "utf8")).toBe("installed\n");
    expect(existsSync(join(tree, ".env-seen"))).toBe(true);
    const s = h.runtime.get(descriptor.id);
    await until(() => s.turns === 1, "the first prompt ran after provisioning");
    expect([...s.results.values()][0]!.text).toBe("echo: hi");
  });

  it("a failing phase fails that start with the phase, the command and its output tail; the tree stays; the next spawn is not held up", async () => {
    h = await makeWsHarness({ worktrees: { provisionConcurrency: 1 } });
    const repo = await repoWith({ install: false, setup: ["echo step-one", "echo broken-output-line >&2; exit 3"] });
    const bad = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "bad" });
    const good = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "good" });
    await expect(h.runtime.ready(bad.descriptor.id)).rejects.toMatchObject({
      code: "provision_failed",
      message: expect.stringContaining("phase setup"),
    });
    const d = h.runtime.describe(h.runtime.get(bad.descriptor.id));
    expect(d.state).toBe("ended");
    expect(d.provisioning).toMatchObject({
      state: "failed",
      phase: "setup",
      command: "echo broken-output-line >&2; exit 3",
      outputTail: expect.stringContaining("broken-output-line"),
    });
    expect(d.exit?.error).toMatch(/`echo broken-output-line >&2; exit 3` exited 3:\nbroken-output-line/);
    expect(existsSync(bad.descriptor.worktree!.path)).toBe(true);
    await expect(h.runtime.ready(good.descriptor.id)).rejects.toMatchObject({ code: "provision_failed" });
  });

  it("queued spawns show their position in the descriptor and the listing; a raised cap applies at the next admission", async () => {
    h = await makeWsHarness({ worktrees: { provisionConcurrency: 1 } });
    const gateFile = join(await tempDir(), "open");
    const repo = await repoWith({ install: false, setup: [`while [ ! -f '${gateFile}' ]; do sleep 0.02; done`] });
    const ids: string[] = [];
    for (const slug of ["q1", "q2", "q3"])
      ids.push((await h.runtime.start({ adapter: "echo", cwd: repo, worktree: slug })).descriptor.id);
    const view = () =>
      h!.runtime
        .list()
        .filter((d) => ids.includes(d.id))
        .map((d) => d.provisioning);
    await until(() => view()[0]?.state === "running", "first admitted");
    expect(view()).toEqual([
      { state: "running", phase: "setup" },
      { state: "queued", position: 1 },
      { state: "queued", position: 2 },
    ]);
    expect(h.runtime.describe(h.runtime.get(ids[2]!)).state).toBe("starting");
    await h.setConfig({ worktrees: { provisionConcurrency: 2 } });
    await until(() => view()[1]?.state === "running", "second admitted after the cap was raised");
    expect(view()[2]).toEqual({ state: "queued", position: 1 });
    await writeFile(gateFile, "");
    for (const id of ids) await h.runtime.ready(id);
    expect(view()).toEqual([{ state: "done" }, { state: "done" }, { state: "done" }]);
  });

  it("the load guard reads worktrees.provisionLoadFactor and the injected load average: one admitted, the rest wait until the load drops", async () => {
    h = await makeWsHarness({ worktrees: { provisionConcurrency: 0, provisionLoadFactor: 1 } });
    h.load.coreCount = 2;
    h.load.value = 5;
    const gateFile = join(await tempDir(), "open");
    const repo = await repoWith({ install: false, setup: [`while [ ! -f '${gateFile}' ]; do sleep 0.02; done`] });
    const ids: string[] = [];
    for (const slug of ["l1", "l2", "l3"])
      ids.push((await h.runtime.start({ adapter: "echo", cwd: repo, worktree: slug })).descriptor.id);
    const view = () => ids.map((id) => h!.runtime.describe(h!.runtime.get(id)).provisioning);
    await until(() => view()[0]?.state === "running", "an idle queue admits one whatever the load");
    await new Promise((r) => setTimeout(r, 1500));
    expect(view().slice(1)).toEqual([
      { state: "queued", position: 1 },
      { state: "queued", position: 2 },
    ]);
    h.load.value = 2;
    await until(() => view().every((p) => p?.state === "running"), "admitted once load1 <= cores x factor");
    await writeFile(gateFile, "");
    for (const id of ids) await h.runtime.ready(id);
  });

  it("a session stopped while queued leaves the queue, one stopped while provisioning has its commands killed; neither agent starts", async () => {
    h = await makeWsHarness({ worktrees: { provisionConcurrency: 1 } });
    const gateFile = join(await tempDir(), "open");
    const repo = await repoWith({ install: false, setup: [`while [ ! -f '${gateFile}' ]; do sleep 0.02; done`] });
    const first = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "first" });
    const second = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "second" });
    const third = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "third" });
    expect(h.runtime.describe(h.runtime.get(second.descriptor.id)).provisioning).toEqual({
      state: "queued",
      position: 1,
    });
    const stopped = await h.runtime.stop(second.descriptor.id);
    expect(stopped).toMatchObject({ state: "ended", exit: { error: "stopped" } });
    await expect(h.runtime.ready(second.descriptor.id)).rejects.toMatchObject({ code: "conflict" });
    expect(h.runtime.describe(h.runtime.get(third.descriptor.id)).provisioning).toEqual({
      state: "queued",
      position: 1,
    });
    // Stopping the one being provisioned kills its commands; the next is admitted at once.
    await h.runtime.stop(first.descriptor.id);
    await expect(h.runtime.ready(first.descriptor.id)).rejects.toMatchObject({ code: "conflict" });
    expect(h.runtime.describe(h.runtime.get(first.descriptor.id)).provisioning).toMatchObject({
      state: "failed",
      phase: "setup",
    });
    await until(
      () => h!.runtime.describe(h!.runtime.get(third.descriptor.id)).provisioning?.state === "running",
      "third admitted",
    );
    await writeFile(gateFile, "");
    await h.runtime.ready(third.descriptor.id);
    expect(h.runtime.get(first.descriptor.id).handle).toBeUndefined();
    expect(h.runtime.get(second.descriptor.id).handle).toBeUndefined();
  });

  it("cheap steps only: a repo with nothing to provision starts at once with no provisioning field", async () => {
    h = await makeWsHarness({ worktrees: { provisionConcurrency: 1 } });
    const repo = await makeRepo(await tempDir());
    const { descriptor } = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "plain" });
    expect(descriptor.state).toBe("idle");
    expect(descriptor.provisioning).toBeUndefined();
  });
});

describe(".svc/worktree.json", () => {
  it("detects the dependency command from the lockfile when install is absent; install: false turns it off", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "package-lock.json"), "{}");
    expect(await provisionPlan(dir, dir)).toMatchObject({ install: "npm ci", source: "lockfile detection" });
    await writeFile(join(dir, "pnpm-lock.yaml"), "");
    expect((await provisionPlan(dir, dir))?.install).toBe("pnpm install --frozen-lockfile");
    await mkdir(join(dir, ".svc"));
    await writeFile(join(dir, ".svc/worktree.json"), JSON.stringify({ install: false }));
    expect(await provisionPlan(dir, dir)).toBeUndefined();
  });

  it("refuses an invalid file, naming the key and the allowed keys", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, ".svc"));
    await writeFile(join(dir, ".svc/worktree.json"), JSON.stringify({ setpu: ["x"], copy: "nope" }));
    await expect(readProvisionFile(dir)).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringMatching(/copy: .*expected array.*allowed keys: install, copy, setup, timeoutSec/s),
    });
    await writeFile(join(dir, ".svc/worktree.json"), "{not json");
    await expect(readProvisionFile(dir)).rejects.toMatchObject({
      message: expect.stringMatching(/worktree.json is not valid JSON/),
    });
  });
});
