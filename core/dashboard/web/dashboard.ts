/**
 * The dashboard page, in the browser: everything it shows and does goes through a
 * DashboardTransport, so the same module runs on loopback and through a pairing.
 * (Contract scaffold: the full views replace this body; the entry point stays.)
 */
import type { DashboardTransport } from "./transport.js";

interface El {
  textContent: string | null;
  dataset: Record<string, string>;
  appendChild(c: El): El;
  replaceChildren(...c: El[]): void;
}
const doc = (globalThis as unknown as { document: { createElement(t: string): El } }).document;

/** Renders the dashboard into `root` and keeps it live; resolves once the first paint is done. */
export async function startDashboard(root: El, transport: DashboardTransport): Promise<void> {
  const get = async (path: string) => {
    const r = await transport.request("GET", path);
    if (r.status >= 400) throw new Error(`the daemon answered ${r.status}: ${r.body.slice(0, 200)}`);
    return JSON.parse(r.body) as Record<string, unknown>;
  };
  const sessions = ((await get("/sessions")).sessions ?? []) as Array<Record<string, unknown>>;
  const sentinels = ((await get("/sentinels")).sentinels ?? []) as Array<Record<string, unknown>>;
  const list = (title: string, items: string[]) => {
    const h = doc.createElement("h2");
    h.textContent = title;
    const ul = doc.createElement("ul");
    for (const t of items) {
      const li = doc.createElement("li");
      li.textContent = t;
      ul.appendChild(li);
    }
    return [h, ul];
  };
  root.replaceChildren(
    ...list(
      "Sessions",
      sessions.map((s) => `${String(s.id)} ${String(s.adapter ?? "")} ${String(s.state ?? "")}`),
    ),
    ...list(
      "Sentinels",
      sentinels.map((s) => `${String(s.id)} ${String(s.status ?? "")}`),
    ),
  );
  root.dataset.loaded = "true";
}
