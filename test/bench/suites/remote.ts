/**
 * Remote reach: the round trip of `GET /health` through the tunnel (plain and end-to-end sealed)
 * and through a pairing's encrypted link, beside a direct loopback request to the same daemon;
 * and the relay's throughput in frames per second beside a raw `ws` echo server.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket, WebSocketServer } from "ws";
import { startRelay } from "../../../core/remote/relay/relay-server.js";
import { callerTokenFor } from "../../../core/remote/tunnel/caller-token.js";
import { fromB64u } from "../../../core/remote/web/bytes.js";
import { E2E_CONTENT_TYPE, sealRequest } from "../../../core/remote/web/tunnel-e2e.js";
import type { BenchLine, BenchSuite } from "../types.js";
import { REPO_ROOT, median } from "../measure.js";

const CLI = join(REPO_ROOT, "dist/core/cli/svc.js");
const TOKEN = "bench-tunnel-token";
const E2E_TOKEN = "bench-tunnel-token-e2e";
const N = Number(process.env.BENCH_REMOTE_RUNS ?? 300);
const FRAMES = Number(process.env.BENCH_RELAY_FRAMES ?? 20_000);

interface Daemon {
  base: string;
  token: string;
  home: string;
  out(): string;
  stop(): Promise<void>;
}

async function startDaemon(home: string, config: unknown, args: string[] = []): Promise<Daemon> {
  await mkdir(home, { recursive: true });
  await writeFile(join(home, "config.json"), JSON.stringify(config));
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", ...args], {
    env: { ...process.env, SVC_HOME: home, SVC_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "ignore"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const info = await readFile(join(home, "runtime.json"), "utf8").then(JSON.parse, () => undefined);
    if (info?.pid === child.pid)
      return {
        base: `http://127.0.0.1:${info.port}`,
        token: info.token,
        home,
        out: () => out,
        stop: async () => (child.kill("SIGTERM"), exited),
      };
    if (Date.now() > deadline || child.exitCode !== null) throw new Error("the daemon did not start");
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function until<T>(probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Median milliseconds of `n` sequential calls after 20 untimed ones. */
async function roundTrip(call: () => Promise<void>, n = N): Promise<number> {
  for (let i = 0; i < 20; i++) await call();
  const runs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await call();
    runs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(runs);
}

const ok = async (r: Response) => {
  if (!r.ok) throw new Error(`${r.status} ${await r.text()}`);
  await r.arrayBuffer();
};

async function throughput(send: (f: Buffer) => void, received: () => number): Promise<number> {
  const frame = Buffer.alloc(1024, 7);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < FRAMES; i++) send(frame);
  await until(() => received() >= FRAMES);
  return FRAMES / (Number(process.hrtime.bigint() - t0) / 1e9);
}

const open = (url: string) =>
  new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });

async function relayThroughput(): Promise<BenchLine> {
  const relay = await startRelay({
    port: 0,
    bind: "127.0.0.1",
    limits: { maxQueueFrames: FRAMES, maxQueueBytes: FRAMES * 2048, maxBufferedBytes: 256 * 1024 * 1024 },
  });
  const echo = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  echo.on("connection", (ws) => ws.on("message", (d, bin) => ws.send(d, { binary: bin })));
  try {
    const ch = "ab".repeat(16);
    const host = await open(`${relay.url}/channel/${ch}?role=host`);
    const peer = await open(`${relay.url}/channel/${ch}?role=peer`);
    let got = 0;
    peer.on("message", (_d, bin) => bin && got++);
    const viaRelay = await throughput(
      (f) => host.send(f),
      () => got,
    );
    const raw = await open(`ws://127.0.0.1:${(echo.address() as { port: number }).port}`);
    let echoed = 0;
    raw.on("message", () => echoed++);
    const viaEcho = await throughput(
      (f) => raw.send(f),
      () => echoed,
    );
    for (const w of [host, peer, raw]) w.close();
    return {
      name: "relay: 1 KiB frames host → peer",
      value: viaRelay,
      unit: "frames/s",
      baseline: { name: "raw ws echo (client → server → client)", value: viaEcho },
      note: `${FRAMES} frames each; both paths cross two WebSocket hops on loopback`,
    };
  } finally {
    echo.close();
    await relay.close();
  }
}

export const remote: BenchSuite = {
  name: "remote",
  async run() {
    const dir = await mkdtemp(join(tmpdir(), "svc-bench-remote-"));
    const relay = await startRelay({ port: 0, bind: "127.0.0.1", tunnelTokens: [TOKEN, E2E_TOKEN] });
    const daemons: Daemon[] = [];
    try {
      const a = await startDaemon(join(dir, "a"), { pairing: { rendezvous: relay.url }, tunnel: { token: TOKEN } }, [
        "--connect",
        relay.url,
      ]);
      daemons.push(a);
      const b = await startDaemon(join(dir, "b"), { pairing: { rendezvous: relay.url } });
      daemons.push(b);
      const e = await startDaemon(join(dir, "e"), { tunnel: { token: E2E_TOKEN, e2e: true } }, [
        "--connect",
        relay.url,
      ]);
      daemons.push(e);
      const publicUrl = await until(() => /tunnel open: (\S+)/.exec(a.out())?.[1]);
      const auth = { authorization: `Bearer ${callerTokenFor(TOKEN)}` };
      const direct = await roundTrip(async () => ok(await fetch(`${a.base}/health`)));
      const tunnel = await roundTrip(async () => ok(await fetch(`${publicUrl}health`, { headers: auth })));

      const post = (d: Daemon, path: string, body: unknown) =>
        fetch(d.base + path, {
          method: "POST",
          headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const offer = (await (await post(a, "/pairing/offers", {})).json()) as { url: string };
      const paired = (await (await post(b, "/pairing/accept", { offer: offer.url })).json()) as { id: string };
      const viaPairing = await roundTrip(async () => {
        const r = await post(b, `/pairings/${paired.id}/request`, { method: "GET", path: "/health" });
        const out = (await r.json()) as { status: number };
        if (!r.ok || out.status !== 200) throw new Error(`pairing call: ${r.status}`);
      });
      const lines: BenchLine[] = [
        {
          name: "GET /health through the tunnel",
          value: tunnel,
          unit: "ms",
          baseline: { name: "direct loopback", value: direct },
          note: `median of ${N}; client → relay → WebSocket → daemon's tunnel client → loopback HTTP`,
        },
        {
          name: "GET /health through a pairing",
          value: viaPairing,
          unit: "ms",
          baseline: { name: "direct loopback", value: direct },
          note: `median of ${N}; CLI's daemon → encrypted link through the relay → paired daemon → loopback HTTP`,
        },
      ];
      const url = await until(() => /tunnel open: (\S+)/.exec(e.out())?.[1]);
      const key = fromB64u(/tunnel end-to-end key: (\S+)/.exec(e.out())![1]!)!;
      const directE = await roundTrip(async () => ok(await fetch(`${e.base}/health`)));
      const sealed = await roundTrip(async () => {
        const s = await sealRequest(key, { method: "GET", path: "/health" }, Date.now());
        const r = await fetch(url, {
          method: "POST",
          headers: { authorization: `Bearer ${callerTokenFor(E2E_TOKEN)}`, "content-type": E2E_CONTENT_TYPE },
          body: s.body,
        });
        const res = await s.openResponse(new Uint8Array(await r.arrayBuffer()) as never);
        if (res.status !== 200) throw new Error(`e2e: ${res.status}`);
      });
      lines.push({
        name: "GET /health through the tunnel, end-to-end sealed",
        value: sealed,
        unit: "ms",
        baseline: { name: "direct loopback", value: directE },
        note: `median of ${N}; includes X25519 + HKDF + AES-GCM on both ends per request`,
      });
      lines.push(await relayThroughput());
      return lines;
    } finally {
      for (const d of daemons) await d.stop().catch(() => undefined);
      await relay.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
  },
};
