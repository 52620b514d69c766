/** The agent worktrees (`GET /worktrees`, as `svc worktree ls` lists them). */
import { ago, h } from "./dom.js";
import { tableSection } from "./table-view.js";
import type { View, ViewContext } from "./view.js";

interface Tree {
  path: string;
  repoName: string;
  slug: string;
  branch?: string;
  session?: string;
  state: string;
  dirty?: boolean;
  ageMs: number;
}

export function worktreesView(ctx: ViewContext): View {
  let trees: Tree[] = [];
  const t = tableSection<Tree>("worktrees", "Worktrees", "No agent worktrees.");
  return {
    id: "worktrees",
    title: "Worktrees",
    section: t.section,
    summary: () => String(trees.length),
    follows: (e) => e.type === "session:started" || e.type === "session:ended",
    async load() {
      const r = await ctx.get<{ worktrees: Tree[]; warnings?: string[] }>("/worktrees");
      trees = r.worktrees;
      t.show(
        trees,
        [
          { title: "Repository", cell: (w) => w.repoName },
          { title: "Slug", cell: (w) => w.slug },
          { title: "Branch", cell: (w) => w.branch ?? "-" },
          { title: "Session", cell: (w) => w.session ?? "-" },
          { title: "State", cell: (w) => h("span", { class: `badge ${w.state}` }, w.state) },
          { title: "Changes", cell: (w) => (w.dirty === undefined ? "-" : w.dirty ? "dirty" : "clean") },
          { title: "Age", cell: (w) => ago(Date.now() - w.ageMs) },
          { title: "Path", cell: (w) => h("code", {}, w.path) },
        ],
        "Agent worktrees",
        r.warnings?.length ? h("p", { class: "error" }, r.warnings.join(" ")) : undefined,
      );
    },
  };
}
