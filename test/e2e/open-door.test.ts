/**
 * A daemon bound beyond loopback with no daemon.authToken does not start (issue 42: until then it
 * only warned, and served everyone who could reach the port for reading): `svc serve` exits
 * non-zero naming the fix and writes nothing, and `svc doctor` says so from config.json. With a
 * token (in config.json, or `--auth-token-file`) it starts, and a network caller needs it; one
 * that started with a token keeps it when the token is unset while it runs, and says so.
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempHome, runCli, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { rawRequest } from "../support/http.js";

const XFF = { "x-forwarded-for": "203.0.113.7" };
const TOKEN = "open-door-token-5511-abcdef";
const REFUSAL =
  /daemon\.bind is 0\.0\.0\.0 \(beyond loopback\) and daemon\.authToken is not set: the daemon does not start open to the network.*svc config set daemon\.authToken < token-file.*svc config set daemon\.bind 127\.0\.0\.1/;
const KEPT =
  /daemon\.authToken was unset while the daemon is bound to 0\.0\.0\.0 \(beyond loopback\): it keeps asking for the token it started with/;

type Findings = { findings: Array<{ severity: string; file: string; message: string; fix: string }> };

describe("a daemon bound beyond loopback without a token", { timeout: 120_000 }, () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let d: DaemonProcess | undefined;

  beforeAll(async () => {
    ({ home, cleanup } = await makeTempHome());
    await writeFile(join(home, "config.json"), JSON.stringify({ daemon: { bind: "0.0.0.0" } }), { mode: 0o600 });
  });
  afterAll(async () => {
    await d?.stop();
    await cleanup?.();
  });

  it("svc serve refuses to start, naming the fix, and writes no runtime.json", async () => {
    const r = await runCli(["serve", "--port", "0"], { home });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(REFUSAL);
    expect(r.stdout).not.toMatch(/listening/);
    expect(existsSync(join(home, "runtime.json"))).toBe(false);
  });

  it("svc doctor reports it from config.json as an error with the fix", async () => {
    const doctor = await runCli(["doctor", "--json"], { home });
    expect(doctor.code).not.toBe(0);
    expect((JSON.parse(doctor.stdout) as Findings).findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          severity: "error",
          file: "config.json",
          message: expect.stringMatching(REFUSAL),
          fix: expect.stringContaining("daemon.authToken"),
        }),
      ]),
    );
  });

  it("--auth-token-file lets it start; a network caller then needs the token; doctor only warns of config.json", async () => {
    const file = join(home, "token-file");
    await writeFile(file, `${TOKEN}\n`, { mode: 0o600 });
    d = await startDaemonProcess({ home, args: ["--auth-token-file", file] });
    expect(d.logs()).not.toMatch(REFUSAL);
    expect((await rawRequest(d.port, { path: "/sessions", headers: XFF })).status).toBe(401);
    const owner = await rawRequest(d.port, {
      path: "/sessions",
      headers: { ...XFF, authorization: `Bearer ${TOKEN}` },
    });
    expect(owner.status).toBe(200);
    const findings = (JSON.parse((await runCli(["doctor", "--json"], { home })).stdout) as Findings).findings;
    expect(findings.filter((f) => REFUSAL.test(f.message)).map((f) => f.severity)).toEqual(["warn"]);
    await d.stop();
    d = undefined;
  });

  it("with daemon.authToken it starts without a warning; unset while it runs, the token it started with still holds", async () => {
    await writeFile(join(home, "config.json"), JSON.stringify({ daemon: { bind: "0.0.0.0", authToken: TOKEN } }), {
      mode: 0o600,
    });
    d = await startDaemonProcess({ home });
    expect(JSON.parse((await runCli(["status", "--json"], { home })).stdout).warnings).toEqual([]);
    expect((await runCli(["config", "unset", "daemon.authToken"], { home })).code).toBe(0);
    // The daemon reloads config.json; its status then says the token was unset.
    await expect
      .poll(async () => JSON.parse((await runCli(["status", "--json"], { home })).stdout).warnings, { timeout: 30_000 })
      .toEqual([expect.stringMatching(KEPT)]);
    expect((await rawRequest(d.port, { path: "/sessions", headers: XFF })).status).toBe(401);
    const owner = await rawRequest(d.port, {
      path: "/sessions",
      headers: { ...XFF, authorization: `Bearer ${TOKEN}` },
    });
    expect(owner.status).toBe(200);
    await d.stop();
    d = undefined;
    const again = await runCli(["serve", "--port", "0"], { home });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(REFUSAL);
  });
});
