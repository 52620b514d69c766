/** A read-only view that is one table (worktrees, adapters): columns of cells from each item. */
import { h, type Elem } from "./dom.js";
import { viewSection } from "./view.js";

export interface Column<T> {
  title: string;
  cell(item: T): string | Elem;
}

export function tableSection<T>(
  id: string,
  title: string,
  emptyText: string,
): { section: Elem; show(items: T[], columns: Column<T>[], caption: string, note?: Elem): void } {
  const body = h("div");
  const section = viewSection(id, title, body);
  return {
    section,
    show(items, columns, caption, note) {
      if (!items.length) return body.replaceChildren(h("p", { class: "empty" }, emptyText), ...(note ? [note] : []));
      const head = h("tr", {}, ...columns.map((c) => h("th", { scope: "col" }, c.title)));
      const rows = items.map((it) => h("tr", {}, ...columns.map((c) => h("td", {}, c.cell(it)))));
      body.replaceChildren(
        ...(note ? [note] : []),
        h("table", {}, h("caption", {}, caption), h("thead", {}, head), h("tbody", {}, ...rows)),
      );
    },
  };
}
