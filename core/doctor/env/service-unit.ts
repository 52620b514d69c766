/**
 * The service unit `svc service install` wrote for this home (its default name): when it runs
 * another node binary or another svc than this one (node upgraded by a version manager, the
 * checkout moved), the daemon it starts is not this svc, or does not start at all.
 */
import type { DoctorFinding } from "../../plugin-api/doctor.js";
import { serviceManager } from "../../service/service-manager.js";
import { MARKER, serviceSpec } from "../../service/service-spec.js";
import { readTextFile } from "../../storage/json-file.js";
import { envFinding } from "./finding.js";

export async function checkServiceUnit(home: string, env: NodeJS.ProcessEnv): Promise<DoctorFinding[]> {
  if (process.platform !== "linux" && process.platform !== "darwin") return [];
  let m: ReturnType<typeof serviceManager>;
  try {
    m = serviceManager(serviceSpec(home, { env }), env);
  } catch {
    return []; // a home no unit can name (a line break in its path): install says so
  }
  const text = await readTextFile(m.file).catch(() => undefined);
  if (text === undefined || !text.includes(MARKER)) return [];
  const installed = m.programOf(text);
  const now = m.programOf(m.render());
  if (installed === now) return [];
  return [
    envFinding(
      "service",
      "warn",
      `the service unit ${m.file} runs ${installed ?? "nothing svc recognises"}, not this svc (${now}): the daemon it starts is another version, or none`,
      "run `svc service install` again (it rewrites its own unit)",
    ),
  ];
}
