import { startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { makeSandbox, type Sandbox } from "../core/plugin-host/sandbox.js";

export interface RecordingSandbox extends Sandbox {
  /** Starts a daemon on this home with the sandbox's install location. */
  start(): Promise<DaemonProcess>;
}

/** A temp home whose install location holds the recording-target fixture, listed in `adapters`. */
export async function makeRecordingSandbox(): Promise<RecordingSandbox> {
  const sb = await makeSandbox();
  await sb.place("install", "recording-target", "svc-recording-target");
  await sb.writeConfig({ adapters: ["svc-recording-target"] });
  return Object.assign(sb, { start: () => startDaemonProcess({ home: sb.home, env: { SVC_INSTALL_DIR: sb.install } }) });
}
