/**
 * The web pair page in headless Chromium (Debian's, driven by playwright-core): served by
 * `svc pair page`, it takes the offer from its fragment, pairs with a real daemon through a real
 * relay in the browser's WebCrypto, and shows the daemon's sessions and sentinels.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_PATH } from "../../support/paths.js";
import { childEnv } from "../../support/cli.js";
import { FIXTURE_AGENTS } from "../../core/sessions/harness.js";
import { pairings, relayWithTap, startNode, waitFor, type Node } from "./helpers.js";

const CHROMIUM = "/usr/bin/chromium";
// As the machine notes say: no background traffic, no sandbox as root, a fresh profile (Playwright makes one).
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

describe("the web pair page in headless Chromium", { timeout: 90_000 }, () => {
  let relay: Awaited<ReturnType<typeof relayWithTap>>;
  let node: Node;
  let page: ChildProcess;
  let pageUrl: string;
  let browser: Browser;
  let shots: string;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      // Never pass without a browser: install it (as root) or fail here with the script's message.
      const r = spawnSync("bash", [join(__dirname, "../../support/ensure-chromium.sh")], {
        stdio: "inherit",
        timeout: 600_000,
      });
      if (r.status !== 0)
        throw new Error(`${CHROMIUM} is missing and could not be installed (test/support/ensure-chromium.sh)`);
    }
    shots = await mkdtemp(join(tmpdir(), "svc-pair-page-"));
    relay = await relayWithTap();
    node = await startNode({ pairing: { rendezvous: relay.url }, acpAgents: FIXTURE_AGENTS });
    page = spawn(process.execPath, [CLI_PATH, "pair", "page", "--port", "0"], {
      env: childEnv(node.home),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    page.stdout!.on("data", (d) => (out += d));
    pageUrl = await waitFor("svc pair page to listen", async () => /svc pair page at (\S+)/.exec(out)?.[1]);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
  }, 660_000);

  afterAll(async () => {
    await browser?.close();
    page?.kill("SIGTERM");
    await node?.cleanup();
    await relay?.close();
    await rm(shots, { recursive: true, force: true });
  });

  it("pairs from the offer in its fragment and shows the daemon's sessions and sentinels", async () => {
    await node.cli(["sentinel", "watch", "job:page", "--session", "ses_page", "--label", "label seen in the browser"]);
    const run = await node.cli(["sessions", "run", "--adapter", "echo", "--prompt", "hi", "--keep", "--json"]);
    const sessionId = (JSON.parse(run.stdout) as { descriptor: { id: string } }).descriptor.id;
    const offered = await node.cli(["pair", "offer", "--qr", "--pair-page", pageUrl, "--json"]);
    const link = (JSON.parse(offered.stdout) as { pairPage: string }).pairPage;
    expect(link.startsWith(`${pageUrl}#offer=svc%3A%2F%2Fpair`)).toBe(true);

    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on("pageerror", (e) => errors.push(e.message));
    await tab.goto(link);
    await tab.waitForSelector("#daemon[data-loaded=true]", { timeout: 20_000 });
    expect(await tab.getAttribute("#status", "data-state")).toBe("connected");
    expect(await tab.textContent("#status")).toContain("scope read (the daemon's owner chose it)");
    expect(await tab.textContent("#sentinels")).toContain("label seen in the browser");
    expect(await tab.textContent("#sessions")).toContain(sessionId);
    await tab.screenshot({ path: join(shots, "pair-page.png") });
    expect(errors).toEqual([]);
    // The daemon keeps the browser as a pairing of its own.
    expect((await pairings(node)).map((p) => p.role)).toContain("host");
    // Nothing readable crossed the relay.
    expect(relay.frames.some((f) => f.data.includes("label seen in the browser"))).toBe(false);
  });

  it("says so when the offer is missing or was used", async () => {
    const tab = await browser.newPage();
    await tab.goto(pageUrl);
    await waitFor("the page's verdict", async () => (await tab.getAttribute("#status", "data-state")) === "error");
    expect(await tab.textContent("#status")).toContain("No offer");
    const offered = await node.cli(["pair", "offer", "--qr", "--pair-page", pageUrl, "--json"]);
    const link = (JSON.parse(offered.stdout) as { pairPage: string }).pairPage;
    const first = await browser.newPage();
    await first.goto(link);
    await first.waitForSelector("#daemon[data-loaded=true]", { timeout: 20_000 });
    const again = await browser.newPage();
    await again.goto(link);
    await waitFor(
      "the reused offer to be refused",
      async () => (await again.getAttribute("#status", "data-state")) === "error",
    );
    expect(await again.textContent("#status")).toMatch(/used, expired or withdrawn/);
  });
});
