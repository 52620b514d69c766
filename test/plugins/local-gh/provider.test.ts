import { describe, expect, it } from "vitest";
import type { PluginContext } from "../../../core/plugin-api/index.js";
import { createGhCli } from "../../../plugins/github-common/index.js";
import localGh, { createLocalGhProvider } from "../../../plugins/local-gh/index.js";
import { switchableLeadership } from "../../support/leadership.js";
import { until } from "../../support/until.js";
import { MemoryCredentials, RecordingIngress, fakeGh, pluginContext, sentinel } from "./helpers.js";

describe("local-gh provider", () => {
  it("is a provider plugin of kind local-gh", () => {
    expect(localGh).toMatchObject({ type: "provider", kind: "local-gh" });
  });

  it("readiness: ready when gh is on PATH and authenticated", async () => {
    const { gh } = await fakeGh("pr-42");
    const p = createLocalGhProvider(
      pluginContext({ sentinels: new RecordingIngress([sentinel("s", ["github:acme/api#42"], 0)]) }),
      gh,
    );
    expect(await p.readiness()).toMatchObject({
      ready: true,
      gh: { installed: true, authenticated: true },
      intervalSeconds: 60,
      watching: { repos: 1, pullRequests: 1 },
    });
  });

  it("readiness: not ready when gh is not logged in, or not on PATH, with an actionable line", async () => {
    const { gh } = await fakeGh("logged-out");
    const out = await createLocalGhProvider(pluginContext({}), gh).readiness();
    expect(out).toMatchObject({ ready: false, gh: { installed: true, authenticated: false } });
    expect(out.detail).toMatch(/gh auth login/);
    const missing = createGhCli({ bin: "gh-definitely-not-installed", env: { PATH: "/nonexistent" } });
    const none = await createLocalGhProvider(pluginContext({}), missing).readiness();
    expect(none).toMatchObject({ ready: false, gh: { installed: false } });
    expect(none.detail).toMatch(/not on PATH/);
  });

  it("resolves pull request URLs and normalizes GitHub subjects", () => {
    const p = createLocalGhProvider(pluginContext({}));
    expect(p.resolveSubject!({ prUrl: "https://github.com/Acme/API/pull/42" })).toBe("github:acme/api#42");
    expect(p.resolveSubject!({ subject: "github:Acme/API" })).toBe("github:acme/api");
    expect(() => p.resolveSubject!({ prUrl: "https://example.com/x" })).toThrow(/pull/);
    expect(p.defaultTypes("github:acme/api#1")).toContain("github.pull_request.*");
  });

  it("setup stores the interval through the credentials service and validates it", async () => {
    const creds = new MemoryCredentials();
    const p = createLocalGhProvider(pluginContext({ credentials: creds }));
    expect(await p.configure!({ intervalSeconds: 120 })).toEqual({ intervalSeconds: 120 });
    expect(creds.values.get("provider-local-gh/intervalSeconds")).toBe("120");
    await expect(p.configure!({ intervalSeconds: 1 })).rejects.toMatchObject({ code: "invalid_input" });
    await expect(p.configure!({ token: "x" })).rejects.toThrow(/allowed: intervalSeconds/);
  });

  it("pollNow runs a cycle through the sentinels service", async () => {
    const { gh } = await fakeGh("pr-42");
    const ingress = new RecordingIngress([sentinel("s", ["github:acme/api"], Date.parse("2026-01-10T09:20:00Z"))]);
    const p = createLocalGhProvider(pluginContext({ sentinels: ingress, credentials: new MemoryCredentials() }), gh);
    await p.pollNow!();
    expect(ingress.ingested.map((e) => e.id)).toEqual(["ghev-34567890002"]);
  });
});

describe("local-gh watch", () => {
  it("polls once soon after any number of watches in a row, so a closed pull request ends its sentinel promptly", async () => {
    const fake = await fakeGh("pr-42");
    const { writeFile, readFile } = await import("node:fs/promises");
    const api = JSON.parse(await readFile(`${fake.dir}/api.json`, "utf8"));
    api["GET repos/acme/api/pulls/42"] = api["GET repos/acme/api/pulls/42"].slice(2);
    await writeFile(`${fake.dir}/api.json`, JSON.stringify(api));
    const at = Date.parse("2026-01-10T09:20:00Z");
    const all = ["a", "b", "c", "d", "e"].map((id) => sentinel(id, ["github:acme/api#42"], at));
    const ingress = new RecordingIngress(all);
    const sleep: PluginContext["sleep"] = (_ms, signal) =>
      new Promise((_, reject) => signal?.addEventListener("abort", () => reject(new Error("aborted"))));
    const ctx = { ...pluginContext({ sentinels: ingress, credentials: new MemoryCredentials() }), sleep };
    const p = createLocalGhProvider(ctx, fake.gh);
    // As the sentinels module does at boot: start, then each active sentinel's watch awaited in turn.
    await p.start!();
    for (const s of all) await p.watch!(s);
    await p.pollNow!(); // queued behind the early cycle
    await p.stop!();
    const pulls = (await fake.calls()).filter((c) => c.path === "repos/acme/api/pulls/42");
    expect(pulls).toHaveLength(2);
    expect(ingress.ingested.filter((e) => e.type === "github.pull_request.closed")).toHaveLength(1);
  });

  it("a watch after the early cycle started queues one more cycle, which reads the new watch set", async () => {
    const fake = await fakeGh("pr-42");
    const s = sentinel("s", ["github:acme/api#42"], Date.parse("2026-01-10T09:20:00Z"));
    const ingress = new RecordingIngress([]);
    const p = createLocalGhProvider(
      pluginContext({ sentinels: ingress, credentials: new MemoryCredentials() }),
      fake.gh,
    );
    await p.watch!(s);
    await new Promise((resolve) => setImmediate(resolve)); // the early cycle has started, with nothing to watch
    ingress.sentinels.push(s);
    await p.watch!(s);
    await p.pollNow!(); // behind both early cycles
    const pulls = (await fake.calls()).filter((c) => c.path === "repos/acme/api/pulls/42");
    expect(pulls).toHaveLength(2);
  });
});

describe("local-gh in a team: one poller, the holder of the lease provider:local-gh", () => {
  it("polls only while it holds the lease: none before, at once when gained, none after it is lost", async () => {
    const fake = await fakeGh("pr-42");
    const s = sentinel("s", ["github:acme/api#42"], Date.parse("2026-01-10T09:20:00Z"));
    const ingress = new RecordingIngress([s]);
    const roles = switchableLeadership();
    // Sleeps end when the test says so.
    const sleeps: Array<{ ms: number; wake(): void }> = [];
    const sleep: PluginContext["sleep"] = (ms) => new Promise((wake) => sleeps.push({ ms, wake }));
    const ctx = {
      ...pluginContext({ sentinels: ingress, credentials: new MemoryCredentials(), leadership: roles.leadership }),
      sleep,
    };
    const p = createLocalGhProvider(ctx, fake.gh);
    const pulls = async () => (await fake.calls()).filter((c) => c.path === "repos/acme/api/pulls/42").length;

    await p.start!();
    await until(() => (sleeps.length === 1 ? true : undefined), "the poller waiting for the lease");
    expect(roles.asked).toEqual(["provider:local-gh"]);
    expect(sleeps[0]!.ms).toBe(1_000);
    await p.watch!(s); // no early cycle either
    await p.pollNow!(); // an explicit poll still runs (after any cycle queued before it)
    expect(await pulls()).toBe(1);

    roles.holding = true;
    sleeps[0]!.wake();
    await until(() => (sleeps.length === 2 ? true : undefined), "the poller's cycle once it holds the lease");
    expect(await pulls()).toBe(2);
    expect(sleeps[1]!.ms).toBe(60_000);

    roles.holding = false;
    sleeps[1]!.wake();
    await until(() => (sleeps.length === 3 ? true : undefined), "the poller waiting for the lease again");
    expect(sleeps[2]!.ms).toBe(1_000);
    expect(await pulls()).toBe(2);

    const stopped = p.stop!();
    sleeps[2]!.wake();
    await stopped;
    expect(roles.released).toEqual(["provider:local-gh"]);
  });
});
