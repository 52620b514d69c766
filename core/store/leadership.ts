/**
 * The host service `leadership` outside team mode: one daemon is the team, so every lease is
 * held from the start and releasing one changes nothing. (Team mode: ./postgres/leases.ts.)
 */
import type { Leadership, Lease } from "../plugin-api/team.js";

const HELD: Lease = { held: () => true, release: async () => undefined };

export const soleLeadership: Leadership = { lease: () => HELD };

/** `leadership` from a service directory that may not offer it (an older host, a test harness): the sole one then. */
export function leadershipOf(services: {
  has(name: string): boolean;
  get(name: "leadership"): Leadership;
}): Leadership {
  return services.has("leadership") ? services.get("leadership") : soleLeadership;
}
