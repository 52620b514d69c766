/** `svc store keygen <file>`: writes a fresh team key file (mode 0600) and names it, never the key. */
import { resolve } from "node:path";
import { writeKeyFile } from "../store/postgres/secret-key.js";
import { println, printJson } from "./output.js";

export async function storeKeygen(file: string, opts: { json?: boolean }): Promise<void> {
  const path = resolve(file);
  await writeKeyFile(path);
  if (opts.json) printJson({ path });
  else println(path);
}
