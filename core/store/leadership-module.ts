/**
 * The leadership DaemonModule: offers the host service `leadership` (roles one daemon of the team
 * holds at a time). Outside team mode every lease is held; in team mode (STORE is postgres) the
 * leases live in PostgreSQL and this daemon heartbeats its row of the team's roll, and its
 * team-mode code loads only then. Stop releases every lease and deletes the row, so another
 * daemon takes over at once.
 */
import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import { LOGGER, SERVICES, resolve } from "../tokens.js";
import { soleLeadership } from "./leadership.js";
import { STORE, type StoreSelection } from "./tokens.js";

const running = new WeakMap<DependencyContainer, () => Promise<void>>();

export const leadershipModule: DaemonModule = {
  name: "leadership",
  async start(c) {
    const services = resolve(c, SERVICES);
    const store: StoreSelection = c.isRegistered(STORE as symbol, true) ? resolve(c, STORE) : { kind: "file" };
    if (store.kind === "file") {
      services.provide("leadership", soleLeadership);
      return;
    }
    const { startTeamRoles } = await import("./postgres/team-roles.js");
    const roles = await startTeamRoles(store.db, resolve(c, LOGGER).child({ module: "leadership" }));
    services.provide("leadership", roles.leadership);
    running.set(c, roles.stop);
  },
  async stop(c) {
    const stop = running.get(c);
    running.delete(c);
    await stop?.();
  },
};
