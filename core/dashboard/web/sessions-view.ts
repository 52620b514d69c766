/**
 * Sessions, grouped as the daemon classifies them (`activity`, per `sessions.attentionDelaySec`):
 * running, needing attention, quiet, ended. A session opens to its live transcript and, when the
 * caller may operate, a prompt box and Stop.
 */
import { ago, h, keepFocus, placeChildren, type Elem } from "./dom.js";
import { KeyedList } from "./keyed-list.js";
import type { DashboardEvent } from "./transport.js";
import { messageOf, viewSection, type View, type ViewContext } from "./view.js";

interface Session {
  id: string;
  adapter?: string;
  label?: string;
  name?: string;
  kind?: string;
  state?: string;
  activity?: string;
  turns?: number;
  lastActivityAt?: number;
  lastStopReason?: string;
  lastTurnErrorMessage?: string;
}

interface Message {
  role: string;
  text: string;
  at?: number;
}

const GROUPS = [
  { key: "running", title: "Running" },
  { key: "attention", title: "Needs attention" },
  { key: "quiet", title: "Quiet" },
  { key: "ended", title: "Ended" },
] as const;

export function sessionsView(ctx: ViewContext): View {
  let sessions: Session[] = [];
  /** Open sessions' transcript refreshers, by id. */
  const open = new Map<string, () => Promise<void>>();
  const groups = new Map<string, { heading: Elem; list: Elem; box: Elem }>();
  const section = viewSection("sessions", "Sessions");
  for (const g of GROUPS) {
    const heading = h("h3", { id: `sessions-${g.key}` }, g.title);
    const list = h("ul", { class: "rows", "aria-labelledby": `sessions-${g.key}` });
    const box = h("div", { class: "group" }, heading, list);
    groups.set(g.key, { heading, list, box });
    section.append(box);
  }
  const empty = h("p", { class: "empty" }, "No sessions. Start one with svc sessions start.");
  section.append(empty);

  const rows = new KeyedList<Session>(
    (s) => row(s),
    (el, s) => fill(el, s),
  );

  function summaryText(s: Session): Elem[] {
    return [
      h("span", { class: "name" }, s.label ?? s.name ?? s.id),
      h(
        "span",
        { class: "meta" },
        `${s.adapter ?? "?"} · ${s.state ?? "?"} · ${s.turns ?? 0} turns · ${ago(s.lastActivityAt)}`,
      ),
      s.activity === "attention"
        ? h(
            "span",
            { class: "badge attention" },
            s.lastTurnErrorMessage ? "failed turn" : (s.lastStopReason ?? "attention"),
          )
        : "",
    ].filter((x): x is Elem => x !== "");
  }

  function fill(el: Elem, s: Session): void {
    el.querySelector("summary")!.replaceChildren(...summaryText(s));
    const controls = el.querySelector(".controls");
    if (controls) controls.hidden = s.state === "ended";
  }

  function row(s: Session): Elem {
    const body = h("div", { class: "body" });
    const details = h("details", { "data-session": s.id }, h("summary", {}, ...summaryText(s)), body);
    details.addEventListener("toggle", () => {
      if (details.open && !open.has(s.id)) open.set(s.id, openSession(s.id, body));
      if (details.open) void open.get(s.id)?.();
    });
    return h("li", {}, details);
  }

  function openSession(id: string, body: Elem): () => Promise<void> {
    const transcript = h("ol", { class: "transcript", "aria-label": `Transcript of ${id}`, "aria-live": "polite" });
    body.replaceChildren(h("p", { class: "id" }, `id ${id}`), transcript);
    const refresh = async () => {
      try {
        const { messages } = await ctx.get<{ messages: Message[] }>(`/conversations/${encodeURIComponent(id)}`);
        transcript.replaceChildren(
          ...(messages.length
            ? messages.map((m) =>
                h("li", { class: `msg ${m.role}` }, h("span", { class: "role" }, `${m.role}: `), m.text),
              )
            : [h("li", { class: "empty" }, "No messages yet.")]),
        );
      } catch (err) {
        transcript.replaceChildren(h("li", { class: "error" }, `Could not read the transcript: ${messageOf(err)}`));
      }
    };
    if (ctx.canOperate) body.append(controls(id, refresh));
    const s = sessions.find((x) => x.id === id);
    const c = body.querySelector(".controls");
    if (c && s?.state === "ended") c.hidden = true;
    return refresh;
  }

  function controls(id: string, refresh: () => Promise<void>): Elem {
    const fieldId = `prompt-${id}`;
    const text = h("textarea", { id: fieldId, name: "text", rows: "2", required: true });
    const send = h("button", { type: "submit" }, "Send");
    const form = h(
      "form",
      { class: "prompt", "aria-label": `Prompt ${id}` },
      h("label", { for: fieldId }, "Prompt"),
      text,
      send,
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const value = text.value.trim();
      if (!value) return;
      send.disabled = true;
      ctx
        .send("POST", `/sessions/${encodeURIComponent(id)}/prompt`, { text: value })
        .then(
          () => {
            text.value = "";
            ctx.announce(`Prompt sent to ${id}.`);
            return refresh();
          },
          (err) => ctx.announce(`The prompt to ${id} was refused: ${messageOf(err)}`, "error"),
        )
        .finally(() => (send.disabled = false));
    });
    const stop = h("button", { type: "button", class: "danger" }, "Stop");
    stop.addEventListener("click", () => {
      stop.disabled = true;
      ctx.send("POST", `/sessions/${encodeURIComponent(id)}/stop`).then(
        () => ctx.announce(`Session ${id} stopped.`),
        (err) => {
          stop.disabled = false;
          ctx.announce(`Could not stop ${id}: ${messageOf(err)}`, "error");
        },
      );
    });
    return h("div", { class: "controls" }, form, stop);
  }

  return {
    id: "sessions",
    title: "Sessions",
    section,
    summary: () => String(sessions.length),
    follows: (e) => e.type.startsWith("session:") || e.type === "events:gap",
    async load() {
      sessions = (await ctx.get<{ sessions: Session[] }>("/sessions")).sessions;
      const byGroup = new Map<string, Session[]>(GROUPS.map((g) => [g.key, []]));
      for (const s of sessions) (byGroup.get(s.activity ?? "quiet") ?? byGroup.get("quiet")!).push(s);
      const ordered = GROUPS.flatMap((g) =>
        byGroup.get(g.key)!.sort((a, b) => (b.lastActivityAt ?? 0) - (a.lastActivityAt ?? 0)),
      );
      const els = rows.render(ordered, (s) => s.id);
      // A session that changes group leaves one list before it joins the next: keep the focus
      // across the whole move, not per list.
      keepFocus(() => {
        let i = 0;
        for (const g of GROUPS) {
          const n = byGroup.get(g.key)!.length;
          const parts = groups.get(g.key)!;
          parts.heading.textContent = `${g.title} (${n})`;
          placeChildren(parts.list, els.slice(i, i + n));
          parts.box.hidden = n === 0;
          i += n;
        }
      });
      empty.hidden = sessions.length > 0;
      for (const id of [...open.keys()]) if (!sessions.some((s) => s.id === id)) open.delete(id);
    },
    onEvent(e: DashboardEvent) {
      const id = (e.data as { sessionId?: string } | undefined)?.sessionId;
      const refresh = id ? open.get(id) : undefined;
      if (refresh) void refresh();
    },
  };
}
