/**
 * The dashboard's first paint in headless Chromium (Debian's, through playwright-core): the time
 * from opening the one-time login link to the page's data-loaded marker (logged in, every view
 * fetched and rendered), with 200 sessions and 1,000 sentinels, beside the same page on an empty
 * daemon measured in the same run. Each round is a fresh browser context and a fresh login code.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import type { BenchLine, BenchSuite } from "../types.js";
import { median } from "../measure.js";
import { startBenchDaemon, writeBenchSentinels, type BenchDaemon } from "../daemon.js";

const CHROMIUM = "/usr/bin/chromium";
const ROUNDS = 5;

type Daemon = BenchDaemon;

/** A home with `sentinels` session-target sentinels written to sentinels.json before the daemon starts. */
async function makeHome(dir: string, name: string, sentinels: number): Promise<string> {
  const home = join(dir, name);
  await mkdir(home, { recursive: true });
  if (sentinels)
    await writeBenchSentinels(
      home,
      sentinels,
      (i) => ({ kind: "session", sessionId: `ses_bench${i}` }),
      (i) => ({ label: `bench sentinel ${i}` }),
    );
  return home;
}

/** `n` terminal sessions (each a `sleep`, so they stay listed as running), 20 at a time. */
async function startSessions(d: Daemon, home: string, n: number): Promise<void> {
  for (let i = 0; i < n; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, n - i) }, async (_, k) => {
        const r = await fetch(`${d.base}/sessions/terminal`, {
          method: "POST",
          headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
          body: JSON.stringify({ argv: ["sleep", "600"], cwd: home, label: `bench session ${i + k}` }),
        });
        if (r.status !== 201) throw new Error(`a bench session did not start: ${r.status} ${await r.text()}`);
      }),
    );
  }
}

/** Median ms from opening the login link to `#app[data-loaded=true]`. */
async function firstPaint(browser: Browser, d: Daemon): Promise<number> {
  const times: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const r = await fetch(`${d.base}/dashboard/login-codes`, {
      method: "POST",
      headers: { authorization: `Bearer ${d.token}` },
    });
    const { path } = (await r.json()) as { path: string };
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    const page = await context.newPage();
    const t0 = performance.now();
    await page.goto(d.base + path);
    await page.waitForSelector("#app[data-loaded=true]", { timeout: 60_000 });
    const ms = performance.now() - t0;
    if (round > 0) times.push(ms); // round 0 warms the daemon's lazily loaded page files
    await context.close();
  }
  return median(times);
}

export const dashboard: BenchSuite = {
  name: "dashboard",
  async run(): Promise<BenchLine[]> {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing (test/support/ensure-chromium.sh installs it)`);
    const dir = await mkdtemp(join(tmpdir(), "svc-bench-dashboard-"));
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    const daemons: Daemon[] = [];
    try {
      const empty = await startBenchDaemon(await makeHome(dir, "empty", 0), { SVC_TERMINAL_NO_PTY: "1" });
      daemons.push(empty);
      const fullHome = await makeHome(dir, "full", 1_000);
      const full = await startBenchDaemon(fullHome, { SVC_TERMINAL_NO_PTY: "1" });
      daemons.push(full);
      await startSessions(full, fullHome, 200);
      const base = await firstPaint(browser, empty);
      const loaded = await firstPaint(browser, full);
      return [
        {
          name: "first paint, 200 sessions and 1,000 sentinels",
          value: loaded,
          unit: "ms",
          baseline: { name: "the same page, empty daemon", value: base },
          note: `median of ${ROUNDS}: opening the login link to the data-loaded marker (login, every view fetched and rendered)`,
        },
      ];
    } finally {
      await browser.close();
      for (const d of daemons) await d.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
