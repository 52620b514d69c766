/**
 * The engine dedup's offline check for `svc doctor` (read-only: nothing is moved, copied or
 * truncated, unlike loading in dedup.ts). See docs/operations.md.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { damagedCopyFindings, tornTailFindings } from "../storage/file-check.js";
import { readTextFile } from "../storage/json-file.js";
import { FILES } from "../storage/paths.js";
import { readDedupTexts } from "./dedup.js";

const START_FIX =
  "start the daemon: it keeps a copy of what is damaged (.damaged-<ms>) and logs what it kept ('sentinel dedup record was damaged'); then look through the copy and delete it";

/** Checks every `sentinels-dedup/<id>.json|.log` under `home`; `known` are the stored sentinels' ids. */
export async function checkDedupFiles(home: string, known: ReadonlySet<string>): Promise<DoctorFinding[]> {
  const dir = join(home, FILES.sentinelsDedup);
  const names = await readdir(dir).catch(() => [] as string[]);
  const ids = [
    ...new Set(names.filter((n) => /\.(json|log)$/.test(n)).map((n) => n.replace(/\.(json|log)$/, ""))),
  ].sort();
  const out: DoctorFinding[] = [];
  for (const id of ids) {
    const rel = (ext: string) => join(FILES.sentinelsDedup, `${id}.${ext}`);
    const snapText = await readTextFile(join(dir, `${id}.json`));
    const logText = await readFile(join(dir, `${id}.log`), "utf8").catch(() => undefined);
    const read = readDedupTexts(snapText, logText);
    if (!known.has(id)) {
      out.push({
        severity: "warn",
        file: rel(snapText !== undefined ? "json" : "log"),
        message: `dedup files of sentinel ${id}, which is not in sentinels.json (left by a removal a crash interrupted)`,
        fix: `delete ${join(dir, id)}.json and .log (nothing uses them)`,
      });
      continue;
    }
    if (read.snapshot === "damaged" || read.snapshot === "missing") {
      out.push({
        severity: "error",
        file: rel("json"),
        message: `the dedup snapshot of sentinel ${id} ${read.snapshot === "damaged" ? "fails its checksum or is not a snapshot" : "is missing, though its journal shows there was one"}: the event ids it held are lost (those events are accepted again if pushed again; the count survives in the journal)`,
        fix: START_FIX,
      });
    }
    if (read.lines.damaged.length > 0) {
      out.push({
        severity: "error",
        file: rel("log"),
        message: `line${read.lines.damaged.length > 1 ? "s" : ""} ${read.lines.damaged.join(", ")} fail their checksum: the deliveries they recorded are lost from the dedup record`,
        fix: START_FIX,
      });
    }
    if (read.lines.tornBytes > 0) out.push(...(await tornTailFindings(home, rel("log"), read.lines.tornBytes)));
  }
  out.push(...(await damagedCopyFindings(home, dir)));
  return out;
}
