/**
 * The dashboard page, in the browser: everything it shows and does goes through a
 * DashboardTransport, so the same module runs on loopback and through a pairing.
 *
 * Five views (sessions, sentinels, swarm runs, worktrees, adapters), one shown at a time behind a
 * row of tabs; a live status line; updates from the daemon's event stream (each view that follows
 * an event reloads, debounced, and refreshes what is open in it).
 */
import { adaptersView } from "./adapters-view.js";
import { h, type Elem } from "./dom.js";
import { oneLoadAtATime } from "./one-load-at-a-time.js";
import { sentinelsView } from "./sentinels-view.js";
import { sessionsView } from "./sessions-view.js";
import { swarmView } from "./swarm-view.js";
import type { DashboardEvent, DashboardTransport } from "./transport.js";
import { messageOf, type View, type ViewContext } from "./view.js";
import { worktreesView } from "./worktrees-view.js";

/** How long events are gathered before the views they concern reload. */
const DEBOUNCE_MS = 250;
/** Sessions move from running to attention or quiet with time alone: look again this often. */
const SETTLE_MS = 15_000;

async function call<T>(transport: DashboardTransport, method: string, path: string, body?: unknown): Promise<T> {
  const r = await transport.request(method, path, body);
  if (r.status >= 400) {
    let message = `the daemon answered ${r.status}`;
    try {
      message = (JSON.parse(r.body) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      // not JSON: keep the status
    }
    throw new Error(message);
  }
  return (r.body ? JSON.parse(r.body) : {}) as T;
}

/** The event's own data, when a transport handed over the whole SSE payload `{seq, at, type, data}`. */
function unwrap(e: DashboardEvent): DashboardEvent {
  const d = e.data as { seq?: unknown; type?: unknown; data?: unknown } | null;
  return d && typeof d === "object" && typeof d.seq === "number" && d.type === e.type
    ? { type: e.type, data: d.data }
    : e;
}

/** Renders the dashboard into `root` and keeps it live; resolves once the first paint is done. */
export async function startDashboard(root: Elem, transport: DashboardTransport): Promise<void> {
  const status = h("p", { id: "dashboard-status", class: "status", role: "status", "aria-live": "polite" }, "Loading…");
  const announce = (message: string, kind: "info" | "error" = "info") => {
    status.textContent = message;
    status.dataset.state = kind;
  };
  const ctx: ViewContext = {
    transport,
    get: (path) => call(transport, "GET", path),
    send: (method, path, body) => call(transport, method, path, body),
    announce,
    canOperate: transport.scope !== "read",
    isOwner: transport.scope === "owner",
  };
  const views: View[] = [sessionsView(ctx), sentinelsView(ctx), swarmView(ctx), worktreesView(ctx), adaptersView(ctx)];
  const tabs = new Map<string, Elem>();
  const nav = h("nav", { class: "tabs", "aria-label": "Dashboard views" });
  const select = (id: string) => {
    for (const v of views) {
      v.section.hidden = v.id !== id;
      const tab = tabs.get(v.id)!;
      if (v.id === id) tab.setAttribute("aria-current", "page");
      else tab.removeAttribute("aria-current");
    }
  };
  for (const v of views) {
    const tab = h(
      "button",
      { type: "button", class: "tab", "aria-controls": `view-${v.id}`, "data-view": v.id },
      v.title,
    );
    tab.addEventListener("click", () => select(v.id));
    tabs.set(v.id, tab);
    nav.append(tab);
  }
  const label = (v: View) => tabs.get(v.id)!.replaceChildren(v.title, " ", h("span", { class: "count" }, v.summary()));
  const scope = { owner: "owner", operate: "may operate", read: "read only" }[transport.scope];
  root.replaceChildren(
    h("p", { class: "where" }, `Connected to ${transport.label} · ${scope}`),
    status,
    nav,
    ...views.map((v) => v.section),
  );
  select("sessions");

  // One reload per view at a time: an event batch, the settle timer and the first paint can ask
  // together, and two answers drawn out of order would leave the older one on the page.
  const loaders = new Map(
    views.map((v) => [
      v,
      oneLoadAtATime(async () => {
        try {
          await v.load();
          label(v);
        } catch (err) {
          v.section.append(h("p", { class: "error" }, `Could not load ${v.title.toLowerCase()}: ${messageOf(err)}`));
          throw err;
        }
      }),
    ]),
  );
  const load = (v: View) => loaders.get(v)!();
  const results = await Promise.allSettled(views.map(load));
  const failed = results.filter((r) => r.status === "rejected").length;
  announce(
    failed ? `${failed} of ${views.length} views could not load; the others are live.` : "Up to date; live.",
    failed ? "error" : "info",
  );

  // Live: gather events, reload the views they concern, then let each refresh what is open.
  let pending: DashboardEvent[] = [];
  let scheduled = false;
  const flush = async () => {
    scheduled = false;
    const batch = pending;
    pending = [];
    for (const v of views) {
      const mine = batch.filter((e) => v.follows(e));
      if (!mine.length) continue;
      await load(v).catch(() => announce(`Could not refresh ${v.title.toLowerCase()}.`, "error"));
      for (const e of mine) v.onEvent?.(e);
    }
  };
  transport.subscribe((e) => {
    pending.push(unwrap(e));
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => void flush(), DEBOUNCE_MS);
  });
  setInterval(() => void load(views[0]!).catch(() => undefined), SETTLE_MS);
  root.dataset.loaded = "true";
}
