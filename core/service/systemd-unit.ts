/**
 * The systemd user unit that runs the daemon (`svc service install` on Linux). Values are quoted
 * by systemd's rules (systemd.syntax(7), systemd.service(5) "Command lines"): an argument with
 * characters outside a safe set is double-quoted with `\` and `"` escaped; `%` is written `%%`
 * (specifiers) and, in command lines, `$` is written `$$` (variable expansion).
 */
import { MARKER, type ServiceSpec } from "./service-spec.js";

const SAFE = /^[A-Za-z0-9_\-./:@+=,]+$/;

/** One word of a command line (ExecStart=). */
export function quoteExecArg(arg: string): string {
  const escaped = arg.replace(/%/g, "%%").replace(/\$/g, "$$$$");
  if (SAFE.test(arg)) return escaped;
  return `"${escaped.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** One `Environment=` assignment, quoted whole. */
export function quoteEnvironment(name: string, value: string): string {
  const text = `${name}=${value}`.replace(/%/g, "%%");
  if (SAFE.test(`${name}=${value}`)) return text;
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

export function systemdUnit(spec: ServiceSpec): string {
  return [
    `# ${MARKER}`,
    "[Unit]",
    `Description=svc daemon (SVC_HOME ${spec.home.replace(/%/g, "%%")})`,
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${spec.argv.map(quoteExecArg).join(" ")}`,
    `Environment=${quoteEnvironment("SVC_HOME", spec.home)}`,
    ...(spec.path ? [`Environment=${quoteEnvironment("PATH", spec.path)}`] : []),
    "Restart=on-failure",
    "RestartSec=2",
    "TimeoutStopSec=30",
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ].join("\n");
}
