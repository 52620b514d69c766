import { useDaemonProcess, type DaemonFixture } from "../support/cli.js";
import { makeSandbox, type Sandbox } from "../core/plugin-host/sandbox.js";

/** A temp home whose install location holds the recording-target fixture, listed in `adapters`. */
export async function makeRecordingSandbox(): Promise<Sandbox> {
  const sb = await makeSandbox();
  await sb.place("install", "recording-target", "svc-recording-target");
  await sb.writeConfig({ adapters: ["svc-recording-target"] });
  return sb;
}

/** {@link useDaemonProcess} on a {@link makeRecordingSandbox} home, the daemon loading the fixture from its install location. */
export function useRecordingDaemon(): DaemonFixture<Sandbox> {
  return useDaemonProcess({
    makeHome: makeRecordingSandbox,
    setup: async (sb) => ({ env: { SVC_INSTALL_DIR: sb.install } }),
  });
}
