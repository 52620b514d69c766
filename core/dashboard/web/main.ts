/**
 * The dashboard on loopback (`/ui/`): logs in with the one-time code in the URL fragment (which the
 * browser never sends anywhere) for a session cookie, removes the code from the address bar and
 * history, then starts the dashboard over same-origin requests.
 */
import { startDashboard } from "./dashboard.js";
import { doc, h } from "./dom.js";
import { loopbackTransport } from "./loopback-transport.js";
import type { DashboardScope } from "./transport.js";

const g = globalThis as unknown as {
  location: { hash: string; pathname: string; search: string };
  history: { replaceState(state: unknown, title: string, url: string): void };
};

const AGAIN = "Run svc open in a terminal for a new login link.";

async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, any> }> {
  const r = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json().catch(() => ({}))) as Record<string, any> };
}

function refuse(root: ReturnType<typeof doc.createElement>, title: string, why: string): void {
  root.replaceChildren(
    h(
      "div",
      { class: "login", role: "alert" },
      h("h2", {}, title),
      h("p", {}, why),
      h("p", {}, h("code", {}, "svc open")),
    ),
  );
  root.dataset.login = "refused";
}

async function main(): Promise<void> {
  const root = doc.getElementById("app")!;
  const code = /(?:^#|&)login=([^&]+)/.exec(g.location.hash)?.[1];
  // The code leaves the address bar (and the history entry) before anything else happens.
  if (g.location.hash) g.history.replaceState(null, "", g.location.pathname + g.location.search);
  let scope: DashboardScope | undefined;
  if (code) {
    const r = await post("/ui/login", { code: decodeURIComponent(code) });
    if (r.status !== 200)
      return refuse(root, "This login link cannot be used", `${r.json.error?.message ?? `HTTP ${r.status}`}. ${AGAIN}`);
    scope = r.json.scope as DashboardScope;
  } else {
    const who = await fetch("/ui/session", { credentials: "same-origin" });
    if (who.status !== 200)
      return refuse(
        root,
        "Not logged in",
        `This browser has no dashboard session for this daemon (none yet, it expired, or the daemon restarted). ${AGAIN}`,
      );
    scope = ((await who.json()) as { scope: DashboardScope }).scope;
  }
  await startDashboard(root, loopbackTransport(scope));
}

void main().catch((err: Error) => {
  const root = doc.getElementById("app");
  if (root) refuse(root, "The dashboard failed to start", err.message);
});
