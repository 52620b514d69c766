/** Real relays and real daemons for the remote tests. */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import WebSocket from "ws";
import { expect } from "vitest";
import { startRelay, type RelayOptions, type RunningRelay } from "../../../core/remote/relay/relay-server.js";
import { makeTempHome, runCli, startDaemonProcess, type DaemonProcess } from "../../support/cli.js";

export interface Captured {
  /** Every frame forwarded, in order, with the channel it crossed (channel frames only). */
  frames: Array<{ kind: string; data: Buffer; channel?: string }>;
}

export async function relayWithTap(o: Partial<RelayOptions> = {}): Promise<RunningRelay & Captured> {
  const frames: Captured["frames"] = [];
  const relay = await startRelay({
    port: 0,
    bind: "127.0.0.1",
    tap: (kind, f, channel) =>
      frames.push({
        kind,
        data: Buffer.isBuffer(f) ? Buffer.from(f) : Buffer.from(f, "utf8"),
        ...(channel !== undefined ? { channel } : {}),
      }),
    ...o,
  });
  return Object.assign(relay, { frames });
}

export interface Node {
  home: string;
  daemon: DaemonProcess;
  cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  restart(): Promise<void>;
  cleanup(): Promise<void>;
}

export async function startNode(config: Record<string, unknown>, args: string[] = []): Promise<Node> {
  const { home, cleanup } = await makeTempHome("svc-remote-");
  await writeFile(join(home, "config.json"), JSON.stringify(config));
  const node: Node = {
    home,
    daemon: await startDaemonProcess({ home, args }),
    cli: (a) => runCli(a, { home }),
    async restart() {
      await node.daemon.stop();
      node.daemon = await startDaemonProcess({ home, args });
    },
    async cleanup() {
      await node.daemon.stop();
      await cleanup();
    },
  };
  return node;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface PairingRow {
  id: string;
  role: string;
  link: { state: string; lastError?: string };
}

export async function pairings(node: Node): Promise<PairingRow[]> {
  const r = await node.daemon.fetch("/pairings");
  return ((await r.json()) as { pairings: PairingRow[] }).pairings;
}

export async function waitConnected(node: Node, id: string): Promise<void> {
  await waitFor(`pairing ${id} connected on ${node.home}`, async () =>
    (await pairings(node)).find((p) => p.id === id && p.link.state === "connected"),
  );
}

export async function offer(node: Node, extra: string[] = []): Promise<string> {
  const r = await node.cli(["pair", "offer", "--json", ...extra]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { offer: string }).offer;
}

export async function accept(node: Node, text: string): Promise<{ code: number; id?: string; stderr: string }> {
  const r = await node.cli(["pair", "accept", text, "--json"]);
  return {
    code: r.code,
    stderr: r.stderr + (r.code ? r.stdout : ""),
    ...(r.code === 0 ? { id: (JSON.parse(r.stdout) as { id: string }).id } : {}),
  };
}

/** A relay and `count` daemons using it as their broker; `stop()` ends them all. */
export async function relayAndNodes(
  count: number,
): Promise<{ relay: RunningRelay & Captured; nodes: Node[]; stop(): Promise<void> }> {
  const relay = await relayWithTap();
  const nodes = await Promise.all(
    Array.from({ length: count }, () => startNode({ pairing: { rendezvous: relay.url } })),
  );
  return { relay, nodes, stop: async () => (await Promise.all(nodes.map((n) => n.cleanup())), await relay.close()) };
}

/** A relay and two daemons paired through it; `stop()` ends all three. */
export async function relayAndTwoNodes(): Promise<{
  relay: RunningRelay & Captured;
  a: Node;
  b: Node;
  stop(): Promise<void>;
}> {
  const { relay, nodes, stop } = await relayAndNodes(2);
  return { relay, a: nodes[0]!, b: nodes[1]!, stop };
}

/** A client on an offer's channel that sends a handshake opening no daemon can open, and never leaves by itself. */
export async function garbagePeer(
  relayUrl: string,
  channel: string,
): Promise<{ texts: string[]; closed: Promise<number> }> {
  const ws = new WebSocket(`${relayUrl}/channel/${channel}?role=peer&wait=0`);
  const texts: string[] = [];
  const closed = new Promise<number>((r) => ws.on("close", (code) => r(code)));
  ws.on("message", (d, bin) => bin || texts.push(String(d)));
  await new Promise((r) => ws.once("open", r));
  await waitFor("paired", async () => texts.some((t) => t.includes("paired")));
  ws.send(Buffer.concat([Buffer.of(1), randomBytes(100)]));
  return { texts, closed };
}
