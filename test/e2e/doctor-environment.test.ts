/**
 * `svc doctor`'s environment checks through the real CLI, in temporary homes: each check seen
 * failing, then passing once its fix is applied. External tools are put on (or left off) PATH: a
 * directory holding only `node` stands for a machine without git or gh; a `git` script printing an
 * old version, and the fake gh of test/fixtures/fake-gh, for those cases.
 */
import { chmod, cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FIXTURES } from "../support/paths.js";
import { makeTempHome, runCli, startDaemonProcess } from "../support/cli.js";

interface Finding {
  severity: "error" | "warn" | "info";
  file: string;
  message: string;
  fix: string;
}

let tools: string;
/** PATH with node and nothing else. */
let bare: string;
/** PATH with node and a git that says it is 2.10. */
let oldGit: string;
beforeAll(async () => {
  tools = await mkdtemp(join(tmpdir(), "svc-doctor-env-"));
  bare = join(tools, "bare");
  oldGit = join(tools, "old-git");
  for (const d of [bare, oldGit]) {
    await mkdir(d);
    await symlink(process.execPath, join(d, "node"));
  }
  await writeFile(join(oldGit, "git"), "#!/bin/sh\necho 'git version 2.10.0'\n");
  await chmod(join(oldGit, "git"), 0o755);
});
afterAll(() => rm(tools, { recursive: true, force: true }));

let home: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ home, cleanup } = await makeTempHome("svc-doctor-env-"));
  return () => cleanup();
});

const doctor = async (env: NodeJS.ProcessEnv = {}, h = home) => {
  const r = await runCli(["doctor", "--json"], { home: h, env });
  const report = JSON.parse(r.stdout) as { healthy: boolean; findings: Finding[] };
  return { code: r.code, ...report };
};
const about = (fs: Finding[], file: string) => fs.filter((f) => f.file === file);
const writeConfig = (config: unknown) => writeFile(join(home, "config.json"), JSON.stringify(config), { mode: 0o600 });
/** sentinels.json holding one active sentinel, as the store writes it. */
const writeSentinel = (id: string, provider: string, target: Record<string, unknown>) =>
  writeFile(
    join(home, "sentinels.json"),
    JSON.stringify({
      version: 1,
      sentinels: [
        {
          id,
          status: "active",
          createdAt: 0,
          spec: { match: [{ subject: "x:*" }], until: { kind: "never" }, target, provider },
        },
      ],
    }),
    { mode: 0o600 },
  );

describe("svc doctor: the environment", () => {
  it("git: missing is an error (exit 1), too old is an error, present is nothing", async () => {
    const missing = await doctor({ PATH: bare });
    expect(missing.code).toBe(1);
    expect(about(missing.findings, "env:git")).toEqual([
      expect.objectContaining({ severity: "error", message: expect.stringContaining("git is not on PATH") }),
    ]);
    const old = await doctor({ PATH: oldGit });
    expect(about(old.findings, "env:git")).toEqual([
      expect.objectContaining({ severity: "error", message: expect.stringContaining("git 2.10.0 is older than 2.17") }),
    ]);
    const ok = await doctor();
    expect(about(ok.findings, "env:git")).toEqual([]);
    expect(ok.code).toBe(0);
  });

  it("gh: missing is a note, a warning once a sentinel uses local-gh; without a login it says so; logged in is nothing", async () => {
    const path = `${oldGit}:${join(FIXTURES, "fake-gh", "bin")}`;
    expect(about((await doctor({ PATH: bare })).findings, "env:gh")).toEqual([
      expect.objectContaining({ severity: "info", message: expect.stringContaining("gh) is not on PATH") }),
    ]);
    await writeSentinel("snt_gh", "local-gh", { kind: "session", sessionId: "ses_x" });
    expect(about((await doctor({ PATH: bare })).findings, "env:gh")).toEqual([
      expect.objectContaining({
        severity: "warn",
        message: expect.stringContaining("1 active sentinel(s) use the local-gh provider"),
      }),
    ]);
    const ghDir = join(home, "gh-config");
    await mkdir(ghDir);
    const loggedOut = await doctor({ PATH: path, GH_CONFIG_DIR: ghDir });
    expect(about(loggedOut.findings, "env:gh")).toEqual([
      expect.objectContaining({
        severity: "warn",
        message: expect.stringContaining("gh is installed but holds no login"),
        fix: expect.stringContaining("gh auth login"),
      }),
    ]);
    await writeFile(join(ghDir, "hosts.yml"), "github.com:\n    git_protocol: https\n    user: octo\n");
    expect(about((await doctor({ PATH: path, GH_CONFIG_DIR: ghDir })).findings, "env:gh")).toEqual([]);
  });

  it("the daemon's port held by another program, then by another svc daemon, is a warning naming it; free is nothing", async () => {
    // Another program: it accepts and hangs up (the doctor's /health probe gets no svc answer).
    const server: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((r) => server.listen({ host: "127.0.0.1", port: 0 }, r));
    const port = (server.address() as { port: number }).port;
    await writeConfig({ daemon: { port } });
    const held = await doctor();
    expect(about(held.findings, "env:port")).toEqual([
      expect.objectContaining({
        severity: "warn",
        message: expect.stringContaining(`127.0.0.1:${port} is in use by another program`),
        fix: expect.stringContaining("svc config set daemon.port"),
      }),
    ]);
    await new Promise((r) => server.close(r));
    expect(about((await doctor()).findings, "env:port")).toEqual([]);
    const other = await makeTempHome("svc-doctor-env-other-");
    const d = await startDaemonProcess({ home: other.home });
    try {
      await writeConfig({ daemon: { port: d.port } });
      expect(about((await doctor()).findings, "env:port")).toEqual([
        expect.objectContaining({
          message: expect.stringContaining(`in use by another svc daemon (pid ${d.child.pid}`),
        }),
      ]);
      // The home's own running daemon holds its port: nothing to tell.
      expect(about((await doctor({}, other.home)).findings, "env:port")).toEqual([]);
    } finally {
      await d.stop();
      await other.cleanup();
    }
  });

  it("NODE_EXTRA_CA_CERTS unreadable or not PEM is an error; a PEM file is nothing", async () => {
    const missing = await doctor({ NODE_EXTRA_CA_CERTS: join(home, "nope.pem") });
    expect(missing.code).toBe(1);
    expect(about(missing.findings, "env:NODE_EXTRA_CA_CERTS")).toEqual([
      expect.objectContaining({ severity: "error", message: expect.stringContaining("cannot be read (ENOENT)") }),
    ]);
    await writeFile(join(home, "junk.pem"), "not a certificate\n");
    expect(
      about((await doctor({ NODE_EXTRA_CA_CERTS: join(home, "junk.pem") })).findings, "env:NODE_EXTRA_CA_CERTS"),
    ).toEqual([
      expect.objectContaining({ severity: "error", message: expect.stringContaining("holds no PEM certificate") }),
    ]);
    const ok = await doctor({ NODE_EXTRA_CA_CERTS: join(FIXTURES, "tls", "ca.crt") });
    expect(about(ok.findings, "env:NODE_EXTRA_CA_CERTS")).toEqual([]);
  });

  it("Node below 22 is a warning (Node 20 is past its end of life); 22 and later is nothing", async () => {
    const node = about((await doctor()).findings, "env:node");
    if (Number(process.versions.node.split(".")[0]) < 22)
      expect(node).toEqual([
        expect.objectContaining({ severity: "warn", message: expect.stringContaining("past its end of life") }),
      ]);
    else expect(node).toEqual([]);
  });
});

describe("svc doctor: sentinels, adapters, config keys and secret files", () => {
  it("a webhook sentinel to a loopback receiver outside webhooks.allowSubnets: a warning whose fix, run, clears it", async () => {
    await writeSentinel("snt_local", "agentpush", {
      kind: "webhook",
      url: "https://localhost:8443/hook",
      secretRef: "v_1",
    });
    const before = (await doctor()).findings.filter((f) => f.message.includes("webhooks.allowSubnets"));
    expect(before).toEqual([
      expect.objectContaining({
        severity: "warn",
        file: "sentinels.json",
        message: expect.stringContaining(
          "webhook sentinel snt_local delivers to localhost:8443, which the SSRF gate refuses (private_target)",
        ),
      }),
    ]);
    const command = /svc config set webhooks\.allowSubnets '(\[[^']*\])'/.exec(before[0]!.fix);
    expect(command?.[1]).toBe('["127.0.0.1/32","::1/128"]');
    const set = await runCli(["config", "set", "webhooks.allowSubnets", command![1]!], { home });
    expect(set.code, set.stderr).toBe(0);
    expect((await doctor()).findings.filter((f) => f.message.includes("webhooks.allowSubnets"))).toEqual([]);
  });

  it("an adapter package that fails to load is an error (exit 1) until it is removed from config", async () => {
    await cp(
      join(FIXTURES, "packages", "svc-fixture-wrong-shape"),
      join(home, "adapters", "node_modules", "svc-fixture-wrong-shape"),
      { recursive: true },
    );
    await writeConfig({ adapters: ["svc-fixture-wrong-shape"] });
    const broken = await doctor();
    expect(broken.code).toBe(1);
    expect(broken.findings.filter((f) => f.message.startsWith("adapter package"))).toEqual([
      expect.objectContaining({
        severity: "error",
        file: "config.json",
        message: expect.stringMatching(
          /^adapter package svc-fixture-wrong-shape does not load \(shape\): .*the daemon starts without target fixture-shapeless$/,
        ),
        fix: expect.stringContaining("svc adapters rm svc-fixture-wrong-shape"),
      }),
    ]);
    await writeConfig({ adapters: [] });
    const ok = await doctor();
    expect(ok.findings.filter((f) => f.message.startsWith("adapter package"))).toEqual([]);
  });

  it("a config key svc does not know acts on nothing: a warning with the key it meant, gone after config unset", async () => {
    await writeConfig({ daemon: { prot: 1 }, webhooks: { allowSubnet: [] }, models: { "a.b": "m" } });
    const keys = (await doctor()).findings.filter((f) => f.message.includes("is not a key svc knows"));
    expect(keys.map((f) => [f.severity, f.message.split(";")[0], f.fix])).toEqual([
      ["warn", "daemon.prot is not a key svc knows", "svc config unset daemon.prot (or set the key it meant)"],
      [
        "warn",
        "webhooks.allowSubnet is not a key svc knows",
        "svc config unset webhooks.allowSubnet (or set the key it meant)",
      ],
    ]);
    expect(keys[0]!.message).toContain("did you mean daemon.port?");
    for (const k of ["daemon.prot", "webhooks.allowSubnet"])
      expect((await runCli(["config", "unset", k], { home })).code).toBe(0);
    expect((await doctor()).findings.filter((f) => f.message.includes("is not a key svc knows"))).toEqual([]);
  });

  it("pairings.json or remote-identity.json readable by others is an error; a home others may enter is a warning", async () => {
    for (const name of ["pairings.json", "remote-identity.json"])
      await writeFile(join(home, name), "{}", { mode: 0o644 });
    await chmod(home, 0o755);
    const open = await doctor();
    expect(open.code).toBe(1);
    expect(
      open.findings
        .filter((f) => /^(pairings|remote-identity)\.json$|^\.$/.test(f.file))
        .map((f) => [f.severity, f.file, f.fix]),
    ).toEqual([
      ["error", "pairings.json", expect.stringContaining("chmod 600")],
      ["error", "remote-identity.json", expect.stringContaining("chmod 600")],
      ["warn", ".", `chmod 700 ${JSON.stringify(home)}`],
    ]);
    for (const name of ["pairings.json", "remote-identity.json"]) await chmod(join(home, name), 0o600);
    await chmod(home, 0o700);
    const closed = await doctor();
    expect(closed.findings.filter((f) => /^(pairings|remote-identity)\.json$|^\.$/.test(f.file))).toEqual([]);
    expect(closed.code).toBe(0);
  });
});
