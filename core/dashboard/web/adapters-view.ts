/** The loaded plugins (adapters, providers, targets) and the load report of those that failed. */
import { h } from "./dom.js";
import { tableSection } from "./table-view.js";
import type { View, ViewContext } from "./view.js";

interface Plugin {
  type: string;
  kind: string;
  description?: string;
  package: string;
  builtin: boolean;
  version?: string;
}

interface Failure {
  package: string;
  phase: string;
  error: string;
}

export function adaptersView(ctx: ViewContext): View {
  let plugins: Plugin[] = [];
  let failures: Failure[] = [];
  const t = tableSection<Plugin>("adapters", "Adapters", "No plugins are loaded.");
  return {
    id: "adapters",
    title: "Adapters",
    section: t.section,
    summary: () => (failures.length ? `${plugins.length}, ${failures.length} failed` : String(plugins.length)),
    follows: () => false,
    async load() {
      ({ plugins, failures } = await ctx.get<{ plugins: Plugin[]; failures: Failure[] }>("/adapters"));
      const report = failures.length
        ? h(
            "div",
            { class: "failures" },
            h("h3", {}, `Failed to load (${failures.length})`),
            h(
              "ul",
              {},
              ...failures.map((f) =>
                h(
                  "li",
                  {},
                  h("strong", {}, f.package),
                  ` (phase ${f.phase}): `,
                  h("span", { class: "error" }, f.error),
                ),
              ),
            ),
          )
        : undefined;
      t.show(
        plugins,
        [
          { title: "Type", cell: (p) => p.type },
          { title: "Kind", cell: (p) => p.kind },
          {
            title: "Package",
            cell: (p) => (p.builtin ? "built in" : `${p.package}${p.version ? `@${p.version}` : ""}`),
          },
          { title: "State", cell: () => h("span", { class: "badge loaded" }, "loaded") },
          { title: "Description", cell: (p) => p.description ?? "" },
        ],
        "Loaded plugins",
        report,
      );
    },
  };
}
