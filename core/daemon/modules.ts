import { coreRoutesModule } from "./core-routes.js";
import type { DaemonModule } from "./module.js";

/** The daemon's modules, in start order. */
export const DAEMON_MODULES: DaemonModule[] = [coreRoutesModule];
