/** `svc adapters rm <id>`: drop the id from config `adapters` and uninstall it from the install location. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { SvcError } from "../../errors.js";
import { installDir } from "../../plugin-host/locations.js";
import { readPackageJson } from "../../plugin-host/resolve-package.js";
import { println } from "../output.js";
import { configFilePath } from "../../config/config-path.js";
import { editAdapters } from "./config-adapters.js";
import { runNpm } from "./npm.js";

export async function removeAdapter(id: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let listed = false;
  const ids = await editAdapters(configFilePath(env), (ids) => {
    listed = ids.includes(id);
    return ids.filter((x) => x !== id);
  });
  const dir = installDir(env);
  const installed = existsSync(join(dir, "package.json")) && isDependency(readPackageJson(dir), id);
  if (!listed && !installed) {
    throw new SvcError(
      "not_found",
      `${id} is neither in adapters (${ids.join(", ") || "empty"}) nor installed in ${dir}`,
    );
  }
  if (installed) {
    await runNpm(["uninstall", id], dir, env);
  }
  println(
    `removed ${id}${listed ? " from adapters" : ""}${installed ? `${listed ? " and" : ""} from ${dir}` : ""}; adapters: ${ids.join(", ") || "(none)"}`,
  );
}

function isDependency(pj: Record<string, unknown>, id: string): boolean {
  return [pj.dependencies, pj.optionalDependencies].some((d) => typeof d === "object" && d !== null && id in d);
}
