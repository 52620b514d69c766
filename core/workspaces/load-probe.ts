import { availableParallelism, loadavg } from "node:os";
import type { LoadProbe } from "./provision-queue.js";

export type { LoadProbe };

/** The operating system's 1-minute load average and core count. */
export const osLoadProbe: LoadProbe = { load1: () => loadavg()[0] ?? 0, cores: () => availableParallelism() };
