/** Swarm runs; one opens to its steps (state, session, stop reason or error). */
import { ago, h, placeChildren, type Elem } from "./dom.js";
import { KeyedList } from "./keyed-list.js";
import type { DashboardEvent } from "./transport.js";
import { messageOf, viewSection, type View, type ViewContext } from "./view.js";

interface RunSummary {
  runId: string;
  name: string;
  state: string;
  createdAt?: number;
  counts?: Record<string, number>;
}

interface Step {
  state: string;
  sessionId?: string;
  stopReason?: string;
  error?: string;
  reason?: string;
}

export function swarmView(ctx: ViewContext): View {
  let runs: RunSummary[] = [];
  const open = new Map<string, () => Promise<void>>();
  const list = h("ul", { class: "rows", "aria-label": "Swarm runs" });
  const empty = h("p", { class: "empty" }, "No swarm runs. Start one with svc run-swarm <file>.");
  const section = viewSection("swarm", "Swarm runs", empty, list);
  const counts = (r: RunSummary) =>
    Object.entries(r.counts ?? {})
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} ${k}`)
      .join(", ");
  const summary = (r: RunSummary): Elem[] => [
    h("span", { class: "name" }, r.name),
    h("span", { class: "meta" }, `${r.state} · ${counts(r) || "no steps"} · ${ago(r.createdAt)}`),
  ];
  const rows = new KeyedList<RunSummary>(
    (r) => {
      const body = h("div", { class: "body" });
      const details = h("details", { "data-run": r.runId }, h("summary", {}, ...summary(r)), body);
      const refresh = async () => {
        try {
          const { run } = await ctx.get<{ run: { steps: Record<string, Step> } }>(
            `/swarm/runs/${encodeURIComponent(r.runId)}`,
          );
          const tbody = h("tbody");
          for (const [id, s] of Object.entries(run.steps))
            tbody.append(
              h(
                "tr",
                {},
                h("td", {}, id),
                h("td", {}, h("span", { class: `badge ${s.state}` }, s.state)),
                h("td", {}, s.sessionId ?? "-"),
                h("td", {}, s.error ?? s.reason ?? s.stopReason ?? ""),
              ),
            );
          const head = h("tr", {}, ...["Step", "State", "Session", "Detail"].map((t) => h("th", { scope: "col" }, t)));
          body.replaceChildren(
            h("p", { class: "id" }, `id ${r.runId}`),
            h("table", {}, h("caption", {}, `Steps of ${r.name}`), h("thead", {}, head), tbody),
          );
        } catch (err) {
          body.replaceChildren(h("p", { class: "error" }, `Could not read ${r.runId}: ${messageOf(err)}`));
        }
      };
      open.set(r.runId, async () => {
        if (details.open) await refresh();
      });
      details.addEventListener("toggle", () => void (details.open && refresh()));
      return h("li", {}, details);
    },
    (el, r) => el.querySelector("summary")!.replaceChildren(...summary(r)),
  );
  return {
    id: "swarm",
    title: "Swarm runs",
    section,
    summary: () => String(runs.length),
    follows: (e) => e.type.startsWith("swarm:") || e.type === "events:gap",
    async load() {
      runs = (await ctx.get<{ runs: RunSummary[] }>("/swarm/runs")).runs;
      placeChildren(
        list,
        rows.render(runs, (r) => r.runId),
      );
      empty.hidden = runs.length > 0;
    },
    onEvent(e: DashboardEvent) {
      const id = (e.data as { runId?: string } | undefined)?.runId;
      if (id) void open.get(id)?.();
    },
  };
}
