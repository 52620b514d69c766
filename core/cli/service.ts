/**
 * `svc service install|uninstall|status` (loaded lazily by commands/service.ts): a systemd user
 * unit (Linux) or a launchd agent (macOS) that runs `svc serve` with this `$SVC_HOME`. The file
 * carries svc's header line; uninstall removes only such a file (svc never deletes what it did not
 * create). When the service manager does not answer (no user bus in a container), the file is
 * written and the commands to run are printed.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { SvcError } from "../errors.js";
import { runCommand, shellLine } from "../service/run-command.js";
import { serviceManager, type ServiceManager, type Step } from "../service/service-manager.js";
import { MARKER, serviceSpec } from "../service/service-spec.js";
import { writeFileDurable } from "../storage/atomic-write.js";
import { readTextFile } from "../storage/json-file.js";
import { svcHome } from "../storage/paths.js";
import { bold, dim, printJson, println } from "./output.js";

export interface ServiceOptions {
  name?: string;
  json?: boolean;
  /** Commander's `--no-start`: false when given. */
  start?: boolean;
}

interface Outcome {
  platform: ServiceManager["kind"];
  unit: string;
  path: string;
  /** Commands svc ran, in order. */
  ran: Array<{ command: string; ok: boolean }>;
  /** Commands left for the user to run (the manager did not answer, or --no-start). */
  toRun: string[];
  /** Why svc did not run them itself. */
  reason?: string;
}

function manager(o: ServiceOptions): ServiceManager {
  return serviceManager(serviceSpec(svcHome(), o.name === undefined ? {} : { name: o.name }));
}

/** Runs `steps`; a step that must not fail and does is an error naming the command and what it said. */
async function runSteps(steps: Step[], ran: Outcome["ran"], after: string): Promise<void> {
  for (const step of steps) {
    const r = await runCommand(step.argv);
    ran.push({ command: shellLine(step.argv), ok: r.ok });
    if (!r.ok && !step.mayFail)
      throw new SvcError(
        "unavailable",
        `${shellLine(step.argv)} failed (${r.stderr.trim() || `exit ${r.code}`}); ${after}`,
      );
  }
}

async function ownFile(m: ServiceManager): Promise<string | undefined> {
  const text = await readTextFile(m.file);
  if (text !== undefined && !text.includes(MARKER))
    throw new SvcError(
      "conflict",
      `${m.file} was not written by svc (it lacks svc's header line "${MARKER}"); svc never changes or deletes a file it did not create: move it aside yourself, or give this service another name with --name`,
    );
  return text;
}

export async function serviceInstall(o: ServiceOptions): Promise<void> {
  const m = manager(o);
  await ownFile(m);
  const home = svcHome();
  if (m.kind === "launchd") await mkdir(join(home, "logs"), { recursive: true, mode: 0o700 });
  await writeFileDurable(m.file, m.render(), { mode: 0o644 });
  const out: Outcome = { platform: m.kind, unit: m.unit, path: m.file, ran: [], toRun: [] };
  const reason = o.start === false ? "--no-start" : await m.unreachable();
  if (reason) {
    out.reason = reason;
    out.toRun = m.activate.map((s) => shellLine(s.argv));
  } else {
    await runSteps(m.activate, out.ran, `the file is written (${m.file}); fix the cause, then run that command again`);
  }
  if (o.json) return printJson(out);
  println(`wrote ${m.file} (${m.unit}: svc serve with SVC_HOME=${home})`);
  report(out, "started it and enabled it at login");
  if (m.kind === "systemd" && out.ran.length)
    println(`if it was already running, it still runs the old unit: systemctl --user restart ${m.unit}`);
  if (m.kind === "systemd")
    println(
      dim(
        "note: a user unit runs while you are logged in; to keep it running without a login session: loginctl enable-linger $USER",
      ),
    );
}

export async function serviceUninstall(o: ServiceOptions): Promise<void> {
  const m = manager(o);
  const text = await ownFile(m);
  const out: Outcome = { platform: m.kind, unit: m.unit, path: m.file, ran: [], toRun: [] };
  if (text === undefined) {
    if (o.json) return printJson({ ...out, removed: false });
    println(`not installed: there is no ${m.file}; nothing to remove`);
    return;
  }
  const reason = await m.unreachable();
  if (!reason) await runSteps(m.deactivate, out.ran, `${m.file} is still there`);
  await rm(m.file);
  const links = reason ? await m.removeLinks() : [];
  if (reason) {
    out.reason = reason;
    out.toRun = m.orphaned.map((s) => shellLine(s.argv));
  } else await runSteps(m.forget, out.ran, `${m.file} is removed`);
  if (o.json) return printJson({ ...out, removed: true, removedLinks: links });
  println(`removed ${m.file}${links.length ? ` and ${links.join(", ")}` : ""}`);
  report(out, "stopped and disabled it first");
}

function report(out: Outcome, did: string): void {
  if (out.ran.length) {
    println(`${did}:`);
    for (const r of out.ran) println(`  ${r.ok ? "ran" : "ran (failed, expected when not loaded)"}: ${r.command}`);
  }
  if (out.toRun.length) {
    println(
      out.reason === "--no-start"
        ? "not started (--no-start); to start it and enable it at login, run:"
        : `${out.reason}; so svc did not run the service manager. Run these yourself where it answers:`,
    );
    for (const c of out.toRun) println(`  ${c}`);
  }
}

export async function serviceStatus(o: ServiceOptions): Promise<void> {
  const m = manager(o);
  const text = await readTextFile(m.file);
  const installed = text !== undefined;
  const reason = installed ? await m.unreachable() : undefined;
  const state = installed && !reason ? await m.state() : {};
  const view = {
    installed,
    platform: m.kind,
    unit: m.unit,
    path: m.file,
    ...(installed ? { writtenBySvc: text.includes(MARKER) } : {}),
    ...state,
    ...(reason ? { managerUnreachable: reason } : {}),
  };
  process.exitCode = installed ? 0 : 3;
  if (o.json) return printJson(view);
  if (!installed) {
    println(`${m.unit}: not installed (no ${m.file}); install it with \`svc service install\``);
    return;
  }
  println(`${bold(m.unit)}: installed at ${m.file}${view.writtenBySvc ? "" : " (not written by svc)"}`);
  if (reason) println(`enabled/active: unknown (${reason})`);
  else println(`enabled: ${state.enabled ?? "unknown"}, active: ${state.active ?? "unknown"}`);
}
