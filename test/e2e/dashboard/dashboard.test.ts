/**
 * The dashboard in headless Chromium (Debian's, driven by playwright-core) against a real daemon:
 * the login by the one-time link of `svc open --no-browser --print`, each view, a prompt seen in
 * the live transcript, a dead webhook delivery replayed, the keyboard path to the prompt box and
 * Stop, the refusals (a reused link, no session, a cross-origin request with the cookie).
 * `UPDATE_SCREENSHOTS=1` writes the views' screenshots to docs/screenshots/dashboard-*.png.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE_AGENTS } from "../../core/sessions/harness.js";
import { runCli, useDaemonProcess } from "../../support/cli.js";
import { REPO_ROOT } from "../../support/paths.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, until, type WebhookReceiver } from "../../support/webhook-receiver.js";
import { launchChromium } from "../../support/chromium.js";

const SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
/** docs/screenshots with UPDATE_SCREENSHOTS=1 (to refresh the committed ones), else a temp folder. */
const SHOTS = process.env.UPDATE_SCREENSHOTS
  ? join(REPO_ROOT, "docs", "screenshots")
  : mkdtempSync(join(tmpdir(), "svc-dashboard-shots-"));

describe("the dashboard in headless Chromium", { timeout: 120_000 }, () => {
  let rx: WebhookReceiver;
  let browser: Browser;
  let page: Page;
  let loginUrl: string;
  let sentinelId: string;
  let sessionId: string;
  let laterId: string;
  const visited: string[] = [];
  const failures: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
    rx.respond = (_d, res) => res.writeHead(410).end("gone");
  });
  const fx = useDaemonProcess({
    prefix: "svc-e2e-dashboard-",
    config: { ...LOOPBACK_CONFIG, acpAgents: FIXTURE_AGENTS },
  });
  const cli = (args: string[]) => runCli(args, { home: fx.home });

  beforeAll(async () => {
    const created = await fx.daemon.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        match: [{ subject: "dash:*" }],
        until: { kind: "never" },
        provider: "agentpush",
        label: "deploys to the receiver",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      }),
    });
    expect(created.status).toBe(201);
    sentinelId = ((await created.json()) as { id: string }).id;
    await cli(["sentinel", "push", "dash:a", "--type", "dash.test", "--id", "ev-dead-1"]);
    await until(async () => {
      const st = (await (await fx.daemon.fetch(`/sentinels/${sentinelId}`)).json()) as any;
      return st.target.outbox.dead === 1;
    }, "the delivery to die (the receiver answers 410)");
    const started = await fx.daemon.fetch("/sessions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        adapter: "echo",
        cwd: fx.home,
        prompt: "hello",
        label: "echo in the browser",
        wait: true,
      }),
    });
    expect(started.status).toBe(201);
    sessionId = ((await started.json()) as { descriptor: { id: string } }).descriptor.id;

    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    page.on("request", (r) => visited.push(r.url()));
    page.on("response", (r) => void (r.status() >= 400 && failures.push(`${r.status()} ${r.url()}`)));
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));
  }, 660_000);

  afterAll(async () => {
    await browser?.close();
    await rx?.close();
    if (!process.env.UPDATE_SCREENSHOTS) rmSync(SHOTS, { recursive: true, force: true });
  });

  const tab = async (view: string) => {
    await page.click(`button.tab[data-view=${view}]`);
    await page.waitForSelector(`#view-${view}:not([hidden])`);
  };

  it("logs in from the one-time link, drops the code from the address bar and shows the sessions", async () => {
    // The link is good for 60 s: ask for it only once the browser is up (its first start, or
    // its install on a fresh machine, can take longer than that).
    const opened = await cli(["open", "--no-browser", "--print"]);
    expect(opened.stderr).toBe("");
    expect(opened.code).toBe(0);
    loginUrl = opened.stdout.trim().split("\n")[0]!;
    expect(loginUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${fx.daemon.port}/ui/#login=[\\w-]{20,}$`));
    await page.goto(loginUrl);
    await page.waitForSelector("#app[data-loaded=true]", { timeout: 30_000 });
    expect(page.url()).toBe(`http://127.0.0.1:${fx.daemon.port}/ui/`);
    const cookies = await page.context().cookies();
    expect(cookies).toEqual([
      expect.objectContaining({
        name: `svc_dashboard_${fx.daemon.port}`,
        httpOnly: true,
        sameSite: "Strict",
        path: "/",
      }),
    ]);
    expect(await page.textContent("#dashboard-status")).toContain("Up to date");
    expect(await page.textContent("#view-sessions")).toContain("echo in the browser");
    await page.screenshot({ path: join(SHOTS, "dashboard-sessions.png") });
  });

  it("shows a session started elsewhere without a reload (live from /events)", async () => {
    const started = await fx.daemon.fetch("/sessions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ adapter: "echo", cwd: fx.home, label: "started after the page loaded" }),
    });
    expect(started.status).toBe(201);
    laterId = ((await started.json()) as { descriptor: { id: string } }).descriptor.id;
    await page.waitForSelector('#view-sessions summary:has-text("started after the page loaded")', { timeout: 30_000 });
  });

  it("sends a prompt from the prompt box and shows the answer in the live transcript", async () => {
    await page.click(`details[data-session="${sessionId}"] > summary`);
    const box = `details[data-session="${sessionId}"] textarea`;
    await page.waitForSelector(box);
    await page.waitForSelector(`details[data-session="${sessionId}"] .transcript li:has-text("echo: hello")`);
    await page.fill(box, "ping from the dashboard");
    await page.click(`details[data-session="${sessionId}"] button[type=submit]`);
    await page.waitForSelector(
      `details[data-session="${sessionId}"] .transcript li:has-text("echo: ping from the dashboard")`,
      { timeout: 30_000 },
    );
    // The answer may arrive (by /events) before the POST's own answer: wait for the status line too.
    await page.waitForSelector(`#dashboard-status:has-text("Prompt sent to ${sessionId}")`);
    await page.screenshot({ path: join(SHOTS, "dashboard-transcript.png") });
  });

  it("Tab reaches the prompt box and then Stop, from the top of the page", async () => {
    // The skip link is the page's first stop.
    await page.focus("a.skip");
    const reached: string[] = [];
    for (let i = 0; i < 40 && !reached.includes("stop"); i++) {
      await page.keyboard.press("Tab");
      // A string, evaluated in the page (the test compiles without the DOM lib).
      const what = await page.evaluate<string>(`(() => {
        const a = document.activeElement;
        const scope = document.querySelector('details[data-session="${sessionId}"]');
        if (!a || !scope || !scope.contains(a)) return "";
        if (a.tagName === "TEXTAREA") return "prompt";
        if (a.tagName === "BUTTON" && a.textContent === "Stop") return "stop";
        return "";
      })()`);
      if (what) reached.push(what);
    }
    expect(reached).toEqual(["prompt", "stop"]);
    // The focused control shows a visible outline.
    const outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle");
    expect(outline).toBe("solid");
  });

  it("keeps the focus in the prompt box when a live update moves its session's row", async () => {
    const box = `details[data-session="${sessionId}"] textarea`;
    // The first session row in the page (rows sort by group, then by last activity).
    const first = () =>
      page.evaluate<string | null>(
        `document.querySelector("#view-sessions details[data-session]")?.getAttribute("data-session") ?? null`,
      );
    const prompt = async (id: string, text: string) => {
      const res = await fx.daemon.fetch(`/sessions/${id}/prompt`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        // Wait for the turn to end: a turn still answering moves its own row up again when its
        // output lands, so the order is only still once both turns are over.
        body: JSON.stringify({ text, wait: true }),
      });
      expect(res.status).toBeLessThan(300);
      await until(async () => (await first()) === id, `session ${id} to be the first row`);
    };
    // Ours first, then a prompt to the other session moves its row above ours while we type.
    await prompt(sessionId, "to the top");
    await page.focus(box);
    await prompt(laterId, "move up");
    const focused = await page.evaluate<boolean>(
      `document.activeElement === document.querySelector(${JSON.stringify(box)})`,
    );
    expect(focused).toBe(true);
  });

  it("shows a sentinel's dead delivery with its reason and replays it", async () => {
    await tab("sentinels");
    await page.click(`details[data-sentinel="${sentinelId}"] > summary`);
    const dead = `details[data-sentinel="${sentinelId}"] tr[data-status=dead]`;
    await page.waitForSelector(dead);
    expect(await page.textContent(dead)).toContain("delivered_rejected");
    await page.screenshot({ path: join(SHOTS, "dashboard-sentinels.png") });
    rx.respond = (_d, res) => res.writeHead(200).end("ok");
    await page.click(`${dead} button`);
    await page.waitForSelector(`details[data-sentinel="${sentinelId}"] tr[data-status=delivered]`, { timeout: 30_000 });
    expect(rx.deliveries.filter((d) => d.id === "ev-dead-1" || d.body.includes("ev-dead-1")).length).toBeGreaterThan(0);
    await page.waitForSelector('#dashboard-status:has-text("ev-dead-1 queued for delivery again")');
  });

  it("renders the swarm runs, worktrees and adapters views", async () => {
    await tab("swarm");
    expect(await page.textContent("#view-swarm")).toContain("No swarm runs");
    await page.screenshot({ path: join(SHOTS, "dashboard-swarm.png") });
    await tab("worktrees");
    expect(await page.textContent("#view-worktrees")).toContain("No agent worktrees");
    await page.screenshot({ path: join(SHOTS, "dashboard-worktrees.png") });
    await tab("adapters");
    await page.waitForSelector("#view-adapters table");
    expect(await page.textContent("#view-adapters")).toMatch(/target\s*webhook/);
    await page.screenshot({ path: join(SHOTS, "dashboard-adapters.png") });
  });

  it("put no token or login code in any URL it visited, and nothing failed to load", async () => {
    const code = loginUrl.split("#login=")[1]!;
    expect(visited.length).toBeGreaterThan(5);
    expect(visited.filter((u) => u.includes(code) || u.includes(fx.daemon.token))).toEqual([]);
    expect(failures).toEqual([]);
    expect(errors).toEqual([]);
    const icon = await fetch(`${fx.daemon.baseUrl}/ui/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
    expect((await fetch(`${fx.daemon.baseUrl}/favicon.ico`)).status).toBe(200);
    const shell = await fetch(`${fx.daemon.baseUrl}/ui/`);
    expect(shell.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await shell.text()).not.toMatch(/<script>|<style>|https?:\/\/(?!www\.w3\.org)/);
  });

  it("refuses the login link a second time, and a browser without a session", async () => {
    const again = await browser.newPage();
    await again.goto(loginUrl);
    await again.waitForSelector("#app[data-login=refused]");
    expect(await again.textContent("#app")).toMatch(/already used or has expired.*svc open/s);
    await again.close();
    const fresh = await browser.newPage();
    await fresh.goto(`${fx.daemon.baseUrl}/ui/`);
    await fresh.waitForSelector("#app[data-login=refused]");
    expect(await fresh.textContent("#app")).toContain("Not logged in");
    await fresh.close();
  });

  it("lets the cookie act only from the daemon's own origin (CSRF)", async () => {
    const [cookie] = await page.context().cookies();
    const header = `${cookie!.name}=${cookie!.value}`;
    const replay = (headers: Record<string, string>) =>
      fetch(`${fx.daemon.baseUrl}/sentinels/${sentinelId}/replay`, {
        method: "POST",
        headers: { cookie: header, "content-type": "application/json", ...headers },
        body: "{}",
      });
    expect((await replay({ origin: "http://evil.example" })).status).toBe(403);
    expect((await replay({})).status).toBe(401);
    expect((await replay({ origin: fx.daemon.baseUrl })).status).toBe(200);
    // Reading with the cookie needs no Origin; the token routes see the owner.
    const code = await fetch(`${fx.daemon.baseUrl}/dashboard/login-codes`, {
      method: "POST",
      headers: { cookie: header, origin: fx.daemon.baseUrl },
    });
    expect(code.status).toBe(201);
  });
});
