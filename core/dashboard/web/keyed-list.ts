/**
 * A list whose rows are kept by key: a refresh updates the rows that exist (their open details,
 * focus and typed text stay), adds the new ones and drops the gone ones, without rebuilding the
 * list. Hundreds of rows refresh without the page freezing.
 */
import type { Elem } from "./dom.js";

export class KeyedList<T> {
  private readonly rows = new Map<string, { el: Elem; item: T }>();

  constructor(
    private readonly create: (item: T) => Elem,
    private readonly update: (el: Elem, item: T) => void,
  ) {}

  /** The row elements for `items`, in order (reusing those already made). */
  render(items: T[], keyOf: (item: T) => string): Elem[] {
    const seen = new Set<string>();
    const out: Elem[] = [];
    for (const item of items) {
      const key = keyOf(item);
      seen.add(key);
      let row = this.rows.get(key);
      if (!row) {
        row = { el: this.create(item), item };
        this.rows.set(key, row);
      } else if (JSON.stringify(row.item) !== JSON.stringify(item)) {
        row.item = item;
        this.update(row.el, item);
      }
      out.push(row.el);
    }
    for (const key of [...this.rows.keys()]) if (!seen.has(key)) this.rows.delete(key);
    return out;
  }
}
