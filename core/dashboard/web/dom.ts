/**
 * The little of the browser's DOM the dashboard uses, typed here (the project compiles without
 * the DOM lib, as the pair page does), and `h()`, which builds an element with its attributes
 * and children.
 */

export interface DomEvent {
  readonly key?: string;
  readonly target: unknown;
  preventDefault(): void;
}

/** An element, loosely: the members of the few element kinds the dashboard makes. */
export interface Elem {
  id: string;
  className: string;
  textContent: string | null;
  hidden: boolean;
  value: string;
  disabled: boolean;
  open: boolean;
  readonly dataset: Record<string, string | undefined>;
  readonly isConnected: boolean;
  readonly children: ArrayLike<Elem>;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  getAttribute(name: string): string | null;
  append(...children: Array<Elem | string>): void;
  replaceChildren(...children: Array<Elem | string>): void;
  addEventListener(type: string, listener: (e: DomEvent) => void): void;
  querySelector(selector: string): Elem | null;
  focus(): void;
  remove(): void;
}

interface Doc {
  createElement(tag: string): Elem;
  getElementById(id: string): Elem | null;
  readonly activeElement: unknown;
}

export const doc = (globalThis as unknown as { document: Doc }).document;

export type Child = Elem | string | undefined | false;

/**
 * `h("button", {class: "x", "aria-label": "Stop"}, "Stop")`. Attribute values `false` or
 * `undefined` are left out; `true` sets an empty attribute.
 */
export function h(tag: string, attrs: Record<string, string | boolean | undefined> = {}, ...children: Child[]): Elem {
  const el = doc.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? "" : v);
  }
  el.append(...children.filter((c): c is Elem | string => c !== undefined && c !== false));
  return el;
}

/**
 * Makes `els` the children of `parent`, touching nothing when they already are (re-inserting a
 * row would take the keyboard focus away from a control inside it).
 */
export function placeChildren(parent: Elem, els: Elem[]): void {
  const now = parent.children;
  if (now.length === els.length && els.every((el, i) => now[i] === el)) return;
  keepFocus(() => parent.replaceChildren(...els));
}

/**
 * Runs `fn` (which may move rows around, even from one list to another) and gives the keyboard
 * focus back to the control that had it, when that control is still on the page: moving a node
 * blurs whatever was focused inside it, and the next Tab would start over from where it was.
 */
export function keepFocus(fn: () => void): void {
  const before = doc.activeElement as Elem | null;
  fn();
  if (before && before !== doc.activeElement && before.isConnected && typeof before.focus === "function") {
    before.focus();
  }
}

/** "3 min ago" from an epoch-ms time. */
export function ago(at: number | undefined, now = Date.now()): string {
  if (!at) return "-";
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}
