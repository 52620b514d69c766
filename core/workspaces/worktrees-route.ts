/**
 * `GET /worktrees`: the agent worktrees as `svc worktree ls --json` lists them (svc's records and
 * the trees under the worktree root, with the live session using each), read-only. Sizes (a walk
 * of every tree) only with `?sizes=1`.
 */
import type { ConfigService } from "../config/config-service.js";
import type { RouteDef } from "../plugin-api/http.js";
import type { SessionRuntime } from "../sessions/runtime.js";
import { inventory } from "./inventory.js";

export function worktreesRoute(home: string, config: ConfigService, sessions: SessionRuntime): RouteDef {
  return {
    method: "GET",
    path: "/worktrees",
    auth: "loopback-or-token",
    handler: async (req) => {
      const live = new Map<string, string>();
      for (const s of sessions.list())
        if (s.state !== "ended" && s.worktree && !live.has(s.worktree.path)) live.set(s.worktree.path, s.id);
      const inv = await inventory({
        home,
        roots: [config.current().effective.worktrees.root],
        live,
        now: Date.now(),
        sizes: ["1", "true"].includes(req.query.get("sizes") ?? ""),
      });
      return { status: 200, body: { worktrees: inv.rows, ...(inv.warnings.length ? { warnings: inv.warnings } : {}) } };
    },
  };
}
