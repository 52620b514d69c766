/** Editing the `adapters` list in config.json: the raw tree, under its lock, created lazily. */
import { CONFIG_WRITE } from "../../config/file-mode.js";
import { validateConfigTree } from "../../config/load.js";
import { SvcError } from "../../errors.js";
import { updateJsonFile } from "../../storage/json-file.js";

/**
 * Applies `edit` to the raw `adapters` array (absent = `[]`) and writes the raw tree back, keeping
 * every other key as it is. Returns the new list, or the old one when `edit` changed nothing.
 */
export async function editAdapters(path: string, edit: (ids: string[]) => string[]): Promise<string[]> {
  let result: string[] = [];
  await updateJsonFile<Record<string, unknown>>(
    path,
    (current) => {
      const tree = current ?? {};
      validateConfigTree(path, tree);
      const before = tree.adapters;
      if (before !== undefined && !Array.isArray(before))
        throw new SvcError("config_invalid", `${path}: adapters must be an array of package ids`);
      const ids = (before ?? []) as string[];
      result = edit([...ids]);
      if (result.length === ids.length && result.every((id, i) => id === ids[i])) {
        result = ids;
        return undefined;
      }
      const next = { ...tree, adapters: result };
      validateConfigTree(path, next);
      return next;
    },
    CONFIG_WRITE,
  );
  return result;
}
