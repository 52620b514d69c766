/**
 * `svc install runtime-profile/<slug> [--package <name>]`. The package name comes from `--package`,
 * else config `profileAliases[slug]`, else `@svc/runtime-profile-<slug>`. It installs like
 * `svc adapters install`; when the package carries an adapter manifest, the manifest is validated
 * (refused and rolled back when invalid) and the id is appended to `adapters`; a package without
 * one is installed and nothing is recorded.
 */
import { loadConfigFile } from "../../config/load.js";
import { configFilePath } from "../../config/config-path.js";
import { installPackage, type InstallResult } from "./install.js";

export function runtimeProfilePackage(
  slug: string,
  explicit: string | undefined,
  aliases: Record<string, string> | undefined,
): string {
  return explicit ?? aliases?.[slug] ?? `@svc/runtime-profile-${slug}`;
}

export async function installRuntimeProfile(
  slug: string,
  explicit?: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<InstallResult> {
  const { config } = await loadConfigFile(configFilePath(env));
  const name = runtimeProfilePackage(slug, explicit, config.profileAliases);
  return installPackage(name, { env, manifest: "optional" });
}
