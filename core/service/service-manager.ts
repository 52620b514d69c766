/**
 * The service manager of this platform, as `svc service` uses it: where the unit file goes, its
 * text, and the commands that activate, deactivate and query it. Linux: systemd's user manager
 * (`systemctl --user`); macOS: launchd's per-user domain (`launchctl … gui/<uid>`).
 */
import { readlink, unlink } from "node:fs/promises";
import { homedir, userInfo } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { SvcError } from "../errors.js";
import { launchdLabel, launchdPlist } from "./launchd-plist.js";
import { runCommand } from "./run-command.js";
import type { ServiceSpec } from "./service-spec.js";
import { systemdUnit } from "./systemd-unit.js";

export interface Step {
  argv: string[];
  /** A failure of this step is expected at times (e.g. booting out an agent that is not loaded). */
  mayFail?: boolean;
}

export interface ServiceManager {
  kind: "systemd" | "launchd";
  /** Where the unit (or agent) file goes. */
  file: string;
  /** The name the manager knows it by: `svc.service`, `dev.svc.daemon`. */
  unit: string;
  render(): string;
  /** The program line(s) of a unit file's text (ExecStart, ProgramArguments), to compare with {@link render}'s. */
  programOf(text: string): string | undefined;
  /** Whether the manager answers here (no user bus in a container, no GUI session over ssh…): the reason when not. */
  unreachable(): Promise<string | undefined>;
  activate: Step[];
  /** Before the file is removed. */
  deactivate: Step[];
  /** After the file is removed. */
  forget: Step[];
  /** For the user to run when svc removed the file while the manager did not answer (stop what still runs, forget it). */
  orphaned: Step[];
  /** What the manager says of the unit; `undefined` fields when it does not answer. */
  state(): Promise<{ enabled?: string; active?: string }>;
  /**
   * Links the manager made to the file (systemd's `default.target.wants/<unit>` from `enable`),
   * removed with it when the manager cannot be asked to: only links that point at this very file.
   */
  removeLinks(): Promise<string[]>;
}

export function serviceManager(
  spec: ServiceSpec,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): ServiceManager {
  if (platform === "linux") return systemd(spec, env);
  if (platform === "darwin") return launchd(spec, env);
  throw new SvcError(
    "not_implemented",
    `svc service writes a systemd user unit (Linux) or a launchd agent (macOS); this platform is ${platform}: run \`svc serve\` under your own service manager`,
  );
}

function systemd(spec: ServiceSpec, env: NodeJS.ProcessEnv): ServiceManager {
  const config =
    env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(homedir(), ".config");
  const unit = `${spec.name}.service`;
  const ctl = (...args: string[]) => ["systemctl", "--user", ...args];
  return {
    kind: "systemd",
    file: join(config, "systemd", "user", unit),
    unit,
    render: () => systemdUnit(spec),
    programOf: (text) => /^ExecStart=.*$/m.exec(text)?.[0],
    async unreachable() {
      const r = await runCommand(ctl("show-environment"), env);
      if (r.ok) return undefined;
      const why = (r.stderr.trim().split("\n")[0] ?? "") || `exit ${r.code}`;
      return r.code === "ENOENT" ? "systemctl is not installed" : `systemctl --user does not answer: ${why}`;
    },
    activate: [{ argv: ctl("daemon-reload") }, { argv: ctl("enable", "--now", unit) }],
    deactivate: [{ argv: ctl("disable", "--now", unit), mayFail: true }],
    forget: [{ argv: ctl("daemon-reload") }],
    orphaned: [{ argv: ctl("stop", unit) }, { argv: ctl("daemon-reload") }],
    async state() {
      const [enabled, active] = await Promise.all([
        runCommand(ctl("is-enabled", unit), env),
        runCommand(ctl("is-active", unit), env),
      ]);
      // is-enabled/is-active print their answer even when they exit non-zero ("disabled", "inactive").
      const word = (r: { stdout: string }) => r.stdout.trim().split("\n")[0] || undefined;
      return { enabled: word(enabled), active: word(active) };
    },
    async removeLinks() {
      const file = join(config, "systemd", "user", unit);
      const link = join(dirname(file), "default.target.wants", unit);
      const target = await readlink(link).catch(() => undefined);
      if (target === undefined || resolve(dirname(link), target) !== file) return [];
      await unlink(link);
      return [link];
    },
  };
}

function launchd(spec: ServiceSpec, env: NodeJS.ProcessEnv): ServiceManager {
  const label = launchdLabel(spec.name);
  const file = join(homedir(), "Library", "LaunchAgents", `${label}.plist`);
  const domain = `gui/${userInfo().uid}`;
  return {
    kind: "launchd",
    file,
    unit: label,
    render: () => launchdPlist(spec),
    programOf: (text) => /<key>ProgramArguments<\/key>\s*<array>[\s\S]*?<\/array>/.exec(text)?.[0],
    async unreachable() {
      const r = await runCommand(["launchctl", "print", domain], env);
      return r.ok
        ? undefined
        : `launchctl does not answer for ${domain}: ${r.stderr.trim().split("\n")[0] || `exit ${r.code}`}`;
    },
    activate: [
      { argv: ["launchctl", "bootout", `${domain}/${label}`], mayFail: true },
      { argv: ["launchctl", "bootstrap", domain, file] },
    ],
    deactivate: [{ argv: ["launchctl", "bootout", `${domain}/${label}`], mayFail: true }],
    forget: [],
    orphaned: [{ argv: ["launchctl", "bootout", `${domain}/${label}`] }],
    async state() {
      const r = await runCommand(["launchctl", "print", `${domain}/${label}`], env);
      if (!r.ok) return { enabled: "not loaded" };
      const state = /^\s*state = (.+)$/m.exec(r.stdout)?.[1]?.trim();
      return { enabled: "loaded", ...(state ? { active: state } : {}) };
    },
    removeLinks: async () => [],
  };
}
