/**
 * The launchd agent that runs the daemon (`svc service install` on macOS): a property list
 * (launchd.plist(5)) with the daemon's argv, `SVC_HOME`, start at login, restart after a crash
 * (KeepAlive SuccessfulExit false: not after a clean stop) and stderr to `$SVC_HOME/logs/launchd.err`.
 */
import { join } from "node:path";
import { MARKER, type ServiceSpec } from "./service-spec.js";

/** The agent's label: `dev.svc.daemon` for the default name `svc`, else `dev.svc.daemon.<name>`. */
export function launchdLabel(name: string): string {
  return name === "svc" ? "dev.svc.daemon" : `dev.svc.daemon.${name}`;
}

const escapeXml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const str = (s: string) => `<string>${escapeXml(s)}</string>`;

export function launchdPlist(spec: ServiceSpec): string {
  const env: Array<[string, string]> = [
    ["SVC_HOME", spec.home],
    ...(spec.path ? [["PATH", spec.path] as [string, string]] : []),
  ];
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    // "--" may not appear inside an XML comment; the marker has none.
    `<!-- ${MARKER} -->`,
    '<plist version="1.0">',
    "<dict>",
    "  <key>Label</key>",
    `  ${str(launchdLabel(spec.name))}`,
    "  <key>ProgramArguments</key>",
    "  <array>",
    ...spec.argv.map((a) => `    ${str(a)}`),
    "  </array>",
    "  <key>EnvironmentVariables</key>",
    "  <dict>",
    ...env.flatMap(([k, v]) => [`    <key>${escapeXml(k)}</key>`, `    ${str(v)}`]),
    "  </dict>",
    "  <key>RunAtLoad</key>",
    "  <true/>",
    "  <key>KeepAlive</key>",
    "  <dict>",
    "    <key>SuccessfulExit</key>",
    "    <false/>",
    "  </dict>",
    "  <key>StandardErrorPath</key>",
    `  ${str(join(spec.home, "logs", "launchd.err"))}`,
    "  <key>ProcessType</key>",
    "  <string>Background</string>",
    "</dict>",
    "</plist>",
    "",
  ].join("\n");
}
