/** What every view of the dashboard is given, and what it offers the page. */
import { h, type Elem } from "./dom.js";
import type { DashboardEvent, DashboardTransport } from "./transport.js";

export interface ViewContext {
  transport: DashboardTransport;
  /** GET `path` as JSON; throws an Error with the daemon's message on an error status. */
  get<T = Record<string, unknown>>(path: string): Promise<T>;
  /** A state-changing call; throws an Error with the daemon's message on an error status. */
  send<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
  /** Says something in the page's live status region (screen readers hear it). */
  announce(message: string, kind?: "info" | "error"): void;
  /** The caller may start, prompt and stop sessions (owner or operate). */
  canOperate: boolean;
  /** The caller is the daemon's owner (replay, and what else needs the bearer token). */
  isOwner: boolean;
}

export interface View {
  id: string;
  title: string;
  section: Elem;
  /** Fetches and renders the view; called at start and again when events say something changed. */
  load(): Promise<void>;
  /** A line for the view's tab: how many of what. */
  summary(): string;
  /** Whether an event concerns the view (it is then reloaded, debounced). */
  follows(e: DashboardEvent): boolean;
  /** After a reload caused by `e`: refresh what is open (a transcript, a sentinel's deliveries). */
  onEvent?(e: DashboardEvent): void;
}

/** The section every view lives in: a region labelled by its heading. */
export function viewSection(id: string, title: string, ...children: Elem[]): Elem {
  return h(
    "section",
    { id: `view-${id}`, class: "view", "aria-labelledby": `${id}-heading` },
    h("h2", { id: `${id}-heading` }, title),
    ...children,
  );
}

/** The message of an error for the status line. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
