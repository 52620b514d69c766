/**
 * The web pair page in headless Chromium (Debian's, driven by playwright-core): served by
 * `svc pair page`, it takes the offer from its fragment, pairs with a real daemon through a real
 * relay in the browser's WebCrypto, and runs the dashboard through the pairing's link: the
 * daemon's sessions and sentinels, live events, and only what the pairing's scope allows.
 * `SVC_UPDATE_SCREENSHOTS=1` writes the paired view to docs/screenshots/dashboard-paired.png.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../support/chromium.js";
import { CLI_PATH, REPO_ROOT } from "../../support/paths.js";
import { childEnv } from "../../support/cli.js";
import { FIXTURE_AGENTS } from "../../core/sessions/harness.js";
import { pairings, relayWithTap, startNode, waitFor, type Node } from "./helpers.js";

describe("the web pair page in headless Chromium", { timeout: 90_000 }, () => {
  let relay: Awaited<ReturnType<typeof relayWithTap>>;
  let node: Node;
  let page: ChildProcess;
  let pageUrl: string;
  let browser: Browser;
  let shots: string;
  let sessionId: string;

  beforeAll(async () => {
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
    browser = await launchChromium();
  }, 660_000);

  afterAll(async () => {
    await browser?.close();
    page?.kill("SIGTERM");
    await node?.cleanup();
    await relay?.close();
    await rm(shots, { recursive: true, force: true });
  });

  /** Opens the pair page for a new offer and waits for the dashboard's first paint through the link. */
  async function pairedTab(scope: "read" | "operate"): Promise<{ tab: Page; errors: string[]; console: string[] }> {
    const offered = await node.cli([
      "pair",
      "offer",
      "--qr",
      "--pair-page",
      pageUrl,
      "--json",
      ...(scope === "operate" ? ["--scope", "operate", "--yes"] : []),
    ]);
    const link = (JSON.parse(offered.stdout) as { pairPage: string }).pairPage;
    expect(link.startsWith(`${pageUrl}#offer=svc%3A%2F%2Fpair`)).toBe(true);
    const tab = await browser.newPage();
    const errors: string[] = [];
    const console: string[] = [];
    tab.on("pageerror", (e) => errors.push(e.message));
    // A 404 (a missing favicon, a module not served) or a CSP refusal shows up here.
    tab.on("console", (m) => m.type() === "error" && console.push(m.text()));
    tab.on("response", (r) => r.status() >= 400 && console.push(`${r.status()} ${r.url()}`));
    await tab.goto(link);
    await tab.waitForSelector("#daemon[data-loaded=true]", { timeout: 30_000 });
    await tab.waitForSelector("#dashboard[data-loaded=true]", { timeout: 30_000 });
    return { tab, errors, console };
  }

  /** A REST call from the page, as its pairing (the page's transport, through the link). */
  const fromPage = (tab: Page, method: string, path: string, body?: unknown) =>
    tab.evaluate(
      ([m, p, b]) =>
        (
          globalThis as unknown as {
            svcDashboard: { request(m: string, p: string, b?: unknown): Promise<{ status: number; body: string }> };
          }
        ).svcDashboard.request(m as string, p as string, b),
      [method, path, body] as const,
    );

  it("runs the dashboard through the pairing: sessions, sentinels, live events; a read pairing cannot prompt", async () => {
    await node.cli(["sentinel", "watch", "job:page", "--session", "ses_page", "--label", "label seen in the browser"]);
    const run = await node.cli(["sessions", "run", "--adapter", "echo", "--prompt", "hi", "--keep", "--json"]);
    sessionId = (JSON.parse(run.stdout) as { descriptor: { id: string } }).descriptor.id;
    const { tab, errors, console } = await pairedTab("read");
    expect(await tab.getAttribute("#status", "data-state")).toBe("connected");
    expect(await tab.textContent("#status")).toContain("scope read (the daemon's owner chose it)");
    expect(await tab.textContent("#dashboard")).toContain(sessionId);
    expect(await tab.textContent("#dashboard")).toContain("label seen in the browser");

    // Live: a sentinel made after the page loaded arrives as an event through the link.
    const before = Number((await tab.getAttribute("#status", "data-events")) ?? 0);
    await node.cli(["sentinel", "watch", "job:later", "--session", "ses_page", "--label", "made after the load"]);
    await waitFor("the sentinel:created event in the browser", async () => {
      const n = Number((await tab.getAttribute("#status", "data-events")) ?? 0);
      return n > before && (await tab.getAttribute("#status", "data-last-event")) === "sentinel:created";
    });
    // … and the dashboard's sentinel list shows it without a reload.
    await tab.waitForSelector('#dashboard :text("made after the load")', { state: "attached", timeout: 30_000 });

    // Read scope: no prompt or stop control is shown, and the daemon refuses one forced through the link.
    expect(await tab.locator("button", { hasText: /stop|send|prompt/i }).count()).toBe(0);
    expect(await tab.locator("textarea").count()).toBe(0);
    const forced = await fromPage(tab, "POST", `/sessions/${sessionId}/prompt`, { text: "not allowed" });
    expect(forced.status).toBe(403);
    expect(forced.body).toMatch(/pairing \w+ \(scope read\)/);
    expect(forced.body).toContain("svc pair scope");
    const stop = await fromPage(tab, "POST", `/sessions/${sessionId}/stop`);
    expect(stop.status).toBe(403);

    await tab.screenshot({ path: join(shots, "pair-page.png"), fullPage: true });
    if (process.env.SVC_UPDATE_SCREENSHOTS === "1")
      await tab.screenshot({ path: join(REPO_ROOT, "docs/screenshots/dashboard-paired.png"), fullPage: true });
    expect(errors).toEqual([]);
    expect(console).toEqual([]);
    // The daemon keeps the browser as a pairing of its own.
    expect((await pairings(node)).map((p) => p.role)).toContain("host");
    // Nothing readable crossed the relay.
    expect(relay.frames.some((f) => f.data.includes("label seen in the browser"))).toBe(false);
    expect(relay.frames.some((f) => f.data.includes("made after the load"))).toBe(false);
    await tab.close();
  });

  it("an operate pairing prompts a session through the link and reads the answer in its transcript", async () => {
    const { tab, errors } = await pairedTab("operate");
    expect(await tab.textContent("#status")).toContain("scope operate");
    expect(
      await tab.evaluate(() => (globalThis as unknown as { svcDashboard: { scope: string } }).svcDashboard.scope),
    ).toBe("operate");
    // The prompt box and Send of the dashboard itself, through the link; the answer shows in the live transcript.
    const card = `details[data-session="${sessionId}"]`;
    await tab.click(`${card} > summary`);
    await tab.waitForSelector(`${card} textarea`);
    await tab.fill(`${card} textarea`, "hello through the pairing");
    await tab.click(`${card} button[type=submit]`);
    await tab.waitForSelector(`${card} .transcript li:has-text("echo: hello through the pairing")`, {
      timeout: 30_000,
    });
    const transcript = await fromPage(tab, "GET", `/sessions/${sessionId}/events`);
    expect(transcript.status).toBe(200);
    expect(transcript.body).toContain("echo: hello through the pairing");
    expect(errors).toEqual([]);
    expect(relay.frames.some((f) => f.data.includes("hello through the pairing"))).toBe(false);
    await tab.close();
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
