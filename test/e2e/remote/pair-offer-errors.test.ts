/**
 * `svc pair offer` against the real CLI, daemon and `svc relay serve`, when the broker is not set
 * up right: no `pairing.rendezvous` (the hosted default is a placeholder in this build), a
 * relay URL without its `/v1` path, and a URL that reaches no relay. Each fails at once, exit 2
 * (or 1 when nothing answers), saying what to do.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_RENDEZVOUS_URL } from "../../../core/config/constants.js";
import { CLI_PATH } from "../../support/paths.js";
import { afterConfigReload, childEnv, makeTempHome } from "../../support/cli.js";
import { accept, offer, startNode, waitConnected, waitFor, type Node } from "./helpers.js";

describe("svc pair offer when the relay is not set up right", { timeout: 90_000 }, () => {
  let relay: ChildProcess;
  let url: string;
  let relayHome: { home: string; cleanup(): Promise<void> };
  let node: Node;

  beforeAll(async () => {
    relayHome = await makeTempHome("svc-relay-");
    relay = spawn(process.execPath, [CLI_PATH, "relay", "serve", "--port", "0"], {
      env: childEnv(relayHome.home),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    relay.stdout!.on("data", (d) => (out += d));
    url = await waitFor("the relay to listen", async () => /rendezvous (ws:\/\/\S+?),/.exec(out)?.[1]);
    node = await startNode({});
  });
  afterAll(async () => {
    await node?.cleanup();
    relay?.kill("SIGTERM");
    await relayHome?.cleanup();
  });

  /**
   * `svc config set` writes config.json; the running daemon takes it up when its watcher reloads
   * the file. The next `pair offer` asks the daemon, so wait for that reload first.
   */
  const setRendezvous = async (value: string) => {
    const r = await afterConfigReload(node.daemon, () => node.cli(["config", "set", "pairing.rendezvous", value]));
    expect(r.code).toBe(0);
  };

  it("without pairing.rendezvous: fails at once, naming `svc relay serve` and the key to set", async () => {
    const r = await node.cli(["pair", "offer"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("pairing.rendezvous is not set");
    expect(r.stderr).toContain(DEFAULT_RENDEZVOUS_URL);
    expect(r.stderr).toContain(
      "run `svc relay serve` on a machine both ends can reach and set pairing.rendezvous to the URL it prints",
    );
    expect(r.stderr).toContain("--rendezvous");
  });

  it("with the relay's URL missing /v1 (configured or passed): says the URL must end in /v1", async () => {
    const bare = url.replace(/\/v1$/, "");
    await setRendezvous(bare);
    const r = await node.cli(["pair", "offer"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `the relay URL must end in /v1, as \`svc relay serve\` prints it (pairing.rendezvous is ${bare}; try ${url})`,
    );
    expect(r.stderr).not.toContain("1006");
    const flag = await node.cli(["pair", "offer", "--rendezvous", `${bare}/`]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain(`--rendezvous is ${bare}/`);
  });

  it("with a URL that reaches no relay route: says what answered and what to check", async () => {
    const r = await node.cli(["pair", "offer", "--rendezvous", url.replace(/\/v1$/, "/relay/v1")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Unexpected server response: 404");
    expect(r.stderr).toContain("Is a relay (`svc relay serve`) running there, and is this the URL it prints");
  });

  it("with the URL `svc relay serve` prints: pairs", async () => {
    await setRendezvous(url);
    const other = await startNode({ pairing: { rendezvous: url } });
    try {
      const got = await accept(other, await offer(node));
      expect(got.stderr).toBe("");
      await waitConnected(other, got.id!);
    } finally {
      await other.cleanup();
    }
  });
});
