/**
 * Sentinels, with a filter (a thousand rows stay usable). One opens to its target's status: for a
 * webhook, the deliveries (pending, delivered, dead with the reason), and for the owner a Replay
 * button on each dead one.
 */
import { ago, h, placeChildren, type Elem } from "./dom.js";
import { KeyedList } from "./keyed-list.js";
import type { DashboardEvent } from "./transport.js";
import { messageOf, viewSection, type View, type ViewContext } from "./view.js";

interface Sentinel {
  id: string;
  status?: string;
  deliveredCount?: number;
  updatedAt?: number;
  spec?: { label?: string; provider?: string; target?: { kind?: string } };
}

interface Delivery {
  requestId: string;
  eventId: string;
  status: string;
  deadReason?: string;
  attempts?: number;
  lastError?: string;
  lastAt?: number;
  replays?: number;
}

interface SentinelStatus {
  target?: { outbox?: { pending: number; delivered: number; dead: number; rows: Delivery[] } } & Record<
    string,
    unknown
  >;
}

export function sentinelsView(ctx: ViewContext): View {
  let sentinels: Sentinel[] = [];
  const open = new Map<string, () => Promise<void>>();
  const filter = h("input", { type: "search", id: "sentinel-filter", autocomplete: "off" });
  const list = h("ul", { class: "rows", "aria-label": "Sentinels" });
  const shown = h("p", { class: "meta", "aria-live": "polite" });
  const section = viewSection(
    "sentinels",
    "Sentinels",
    h("div", { class: "filter" }, h("label", { for: "sentinel-filter" }, "Filter sentinels"), filter),
    shown,
    list,
  );
  const text = (s: Sentinel) =>
    [s.id, s.status, s.spec?.label, s.spec?.provider, s.spec?.target?.kind].filter(Boolean).join(" ").toLowerCase();
  const summary = (s: Sentinel): Elem[] => [
    h("span", { class: "name" }, s.spec?.label ?? s.id),
    h(
      "span",
      { class: "meta" },
      `${s.spec?.provider ?? "?"} → ${s.spec?.target?.kind ?? "?"} · ${s.status ?? "?"} · ${s.deliveredCount ?? 0} events · ${ago(s.updatedAt)}`,
    ),
  ];
  const rows = new KeyedList<Sentinel>(
    (s) => {
      const body = h("div", { class: "body" });
      const details = h("details", { "data-sentinel": s.id }, h("summary", {}, ...summary(s)), body);
      details.addEventListener("toggle", () => {
        if (details.open && !open.has(s.id)) open.set(s.id, deliveries(s.id, body));
        if (details.open) void open.get(s.id)?.();
      });
      return h("li", {}, details);
    },
    (el, s) => el.querySelector("summary")!.replaceChildren(...summary(s)),
  );

  function render(): void {
    const q = filter.value.trim().toLowerCase();
    const visible = q ? sentinels.filter((s) => text(s).includes(q)) : sentinels;
    placeChildren(
      list,
      rows.render(visible, (s) => s.id),
    );
    shown.textContent = sentinels.length
      ? q
        ? `${visible.length} of ${sentinels.length} sentinels match.`
        : `${sentinels.length} sentinels.`
      : "No sentinels.";
  }
  filter.addEventListener("input", render);

  function deliveries(id: string, body: Elem): () => Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const refresh = async () => {
      if (timer) clearTimeout(timer);
      try {
        const st = await ctx.get<SentinelStatus>(`/sentinels/${encodeURIComponent(id)}`);
        const outbox = st.target?.outbox;
        if (!outbox) {
          body.replaceChildren(h("p", { class: "id" }, `id ${id}`), h("p", {}, "This target keeps no deliveries."));
          return;
        }
        body.replaceChildren(
          h("p", { class: "id" }, `id ${id}`),
          h("p", {}, `${outbox.pending} pending · ${outbox.delivered} delivered · ${outbox.dead} dead`),
          table(id, outbox.rows, refresh),
        );
        // Pending rows settle on their own: look again until none is left.
        if (outbox.pending > 0) timer = setTimeout(() => void refresh(), 1000);
      } catch (err) {
        body.replaceChildren(h("p", { class: "error" }, `Could not read ${id}: ${messageOf(err)}`));
      }
    };
    return refresh;
  }

  function table(id: string, items: Delivery[], refresh: () => Promise<void>): Elem {
    if (!items.length) return h("p", { class: "empty" }, "No deliveries yet.");
    const tbody = h("tbody");
    for (const d of items.slice(-200).reverse()) {
      let action: Elem | string = "";
      if (d.status === "dead" && ctx.isOwner) {
        const b = h("button", { type: "button", "aria-label": `Replay event ${d.eventId}` }, "Replay");
        b.addEventListener("click", () => {
          b.disabled = true;
          ctx.send("POST", `/sentinels/${encodeURIComponent(id)}/replay`, { eventId: d.eventId }).then(
            () => {
              ctx.announce(`Event ${d.eventId} queued for delivery again.`);
              return refresh();
            },
            (err) => {
              b.disabled = false;
              ctx.announce(`The replay of ${d.eventId} was refused: ${messageOf(err)}`, "error");
            },
          );
        });
        action = b;
      }
      tbody.append(
        h(
          "tr",
          { "data-status": d.status },
          h("td", {}, d.eventId),
          h("td", {}, h("span", { class: `badge ${d.status}` }, d.status)),
          h("td", {}, [d.deadReason, d.lastError].filter(Boolean).join(": ")),
          h("td", {}, String(d.attempts ?? 0)),
          h("td", {}, ago(d.lastAt)),
          h("td", {}, action),
        ),
      );
    }
    const head = h(
      "tr",
      {},
      ...["Event", "Status", "Reason or last error", "Attempts", "Last attempt", "Action"].map((t) =>
        h("th", { scope: "col" }, t),
      ),
    );
    return h("table", { class: "deliveries" }, h("caption", {}, `Deliveries of ${id}`), h("thead", {}, head), tbody);
  }

  return {
    id: "sentinels",
    title: "Sentinels",
    section,
    summary: () => String(sentinels.length),
    follows: (e) => e.type.startsWith("sentinel:") || e.type === "events:gap",
    async load() {
      sentinels = (await ctx.get<{ sentinels: Sentinel[] }>("/sentinels")).sentinels;
      render();
      for (const id of [...open.keys()]) if (!sentinels.some((s) => s.id === id)) open.delete(id);
    },
    onEvent(e: DashboardEvent) {
      const id = (e.data as { sentinelId?: string } | undefined)?.sentinelId;
      const refresh = id ? open.get(id) : undefined;
      if (refresh) void refresh();
    },
  };
}
