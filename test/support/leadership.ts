import type { Leadership } from "../../core/plugin-api/team.js";

/**
 * A `leadership` host service whose leases the test holds or not (`holding`), for the parts that
 * act only on the daemon holding a role; it records the lease names asked for and releases.
 */
export function switchableLeadership() {
  const state = { holding: false, asked: [] as string[], released: [] as string[] };
  const leadership: Leadership = {
    lease: (name) => {
      state.asked.push(name);
      return { held: () => state.holding, release: async () => void state.released.push(name) };
    },
  };
  return Object.assign(state, { leadership });
}
