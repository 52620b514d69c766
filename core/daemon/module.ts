import type { DependencyContainer } from "tsyringe";

/**
 * A part of the daemon with a lifecycle: it registers routes, tools and host services at start,
 * and releases what it holds at stop. Modules start in the order of DAEMON_MODULES and stop in
 * reverse.
 */
export interface DaemonModule {
  name: string;
  start(c: DependencyContainer): Promise<void>;
  /** The daemon begins to stop: end long-lived responses (streams) so the listener can close. */
  drain?(c: DependencyContainer): Promise<void>;
  stop?(c: DependencyContainer): Promise<void>;
}
