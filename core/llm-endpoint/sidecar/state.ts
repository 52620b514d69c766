/**
 * What the sidecar knows, all of it from the daemon over IPC: routes and roles (with their parsed
 * upstream targets), the budgets and their counters, the granted tokens, the upstream timeout.
 */
import type { ParentMessage } from "../protocol.js";
import { targetOf, type Target } from "./forward.js";
import { Grants } from "./grants.js";
import { Limits } from "./limits.js";
import type { RouteTable } from "./routing.js";

type Configure = Extract<ParentMessage, { type: "configure" }>;

export class SidecarState {
  table: RouteTable = { routes: [], roles: [] };
  targets = new Map<string, Target>();
  upstreamTimeoutMs = 600_000;
  readonly limits = new Limits();
  readonly grants = new Grants();
  /** Calls ended since start. */
  calls = 0;

  configure(m: Configure): void {
    this.table = { routes: m.routes, roles: m.roles };
    this.targets = new Map(m.routes.map((r) => [r.name, targetOf(r)]));
    this.upstreamTimeoutMs = m.upstreamTimeoutMs;
    this.limits.configure(m.budgets, m.day);
  }
}
