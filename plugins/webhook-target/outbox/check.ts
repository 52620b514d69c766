/**
 * The outbox's offline check for `svc doctor`: the same reading as at open (load-state.ts), but
 * read-only: nothing is copied aside, moved, rebuilt or truncated. See docs/operations.md.
 */
import { join } from "node:path";
import type { DoctorFinding, SentinelView } from "../../../core/plugin-api/index.js";
import { damagedCopyFindings, secretModeFinding, tornTailFindings } from "../../../core/plugin-api/index.js";
import { BodyStore } from "./body-store.js";
import { readOutboxFiles } from "./load-state.js";
import { OUTBOX_FILES } from "./persistence.js";
import { RowTable } from "./row-table.js";

const START_FIX =
  "start the daemon: it keeps a copy of what is damaged (.damaged-<ms>), recovers what it can and logs what was lost ('webhook outbox loaded'); then look through the copy and delete it";

/** Checks `sentinel-webhook-outbox.*` under `home` against the stored sentinels. */
export async function checkOutboxFiles(home: string, sentinels: readonly SentinelView[]): Promise<DoctorFinding[]> {
  const out: DoctorFinding[] = [];
  const bodies = new BodyStore(join(home, OUTBOX_FILES.bodies));
  const files = await readOutboxFiles(home, bodies);
  for (const { file, parsed } of files.journals) {
    if (parsed.damaged.length > 0) {
      out.push({
        severity: "error",
        file,
        message: `line${parsed.damaged.length > 1 ? "s" : ""} ${parsed.damaged.join(", ")} fail${parsed.damaged.length > 1 ? "" : "s"} their checksum or are not outbox records: the deliveries they recorded are lost (an event whose row is lost is accepted again if pushed again)`,
        fix: START_FIX,
      });
    }
    if (parsed.tornBytes > 0) out.push(...(await tornTailFindings(home, file, parsed.tornBytes)));
  }
  const snap = files.snapshot;
  if (snap.state === "damaged" || snap.state === "missing") {
    out.push({
      severity: "error",
      file: OUTBOX_FILES.snapshot,
      message:
        snap.state === "damaged"
          ? "the outbox snapshot fails its checksum or is not an outbox snapshot: the delivery state of its rows is lost"
          : "the outbox snapshot is missing, though the journals or the stored bodies show the outbox had one: the delivery state of its rows is lost",
      fix: "start the daemon: it moves a damaged snapshot aside and rebuilds the rows from the stored bodies as pending, so those events are sent again (receivers deduplicate on webhook-id)",
    });
  }
  if (snap.state === "ok" && snap.malformedRows > 0) {
    out.push({
      severity: "error",
      file: OUTBOX_FILES.snapshot,
      message: `${snap.malformedRows} rows are malformed (a required field is missing): they are skipped, their deliveries lost`,
      fix: START_FIX,
    });
  }

  // The state the daemon would start with: the snapshot, then the journals replayed on top.
  const table = new RowTable();
  if (snap.state === "ok") {
    table.loadTraces(snap.traces);
    for (const row of snap.rows) table.apply({ seq: 0, op: "add", row });
  }
  const seq = snap.state === "ok" ? snap.seq : 0;
  for (const { parsed } of files.journals) for (const rec of parsed.records) if (rec.seq > seq) table.apply(rec);

  const bodyFiles = new Set(await bodies.list().catch(() => [] as string[]));
  const referenced = new Set<string>();
  const broken = new Map<string, { rows: number; problem: string }>();
  const known = new Set(sentinels.map((s) => s.id));
  const pendingOfUnknown = new Map<string, number>();
  for (const row of table.all()) {
    if (table.staged.has(row.requestId)) continue;
    referenced.add(row.bodyBytes.file);
    if (row.status !== "pending") continue;
    if (!known.has(row.sentinelId))
      pendingOfUnknown.set(row.sentinelId, (pendingOfUnknown.get(row.sentinelId) ?? 0) + 1);
    const problem = !bodyFiles.has(row.bodyBytes.file)
      ? "missing"
      : await bodies.read(row.bodyBytes).then(
          () => undefined,
          () => "altered",
        );
    if (problem) {
      const b = broken.get(row.bodyBytes.file) ?? { rows: 0, problem };
      b.rows += 1;
      broken.set(row.bodyBytes.file, b);
    }
  }
  for (const [file, b] of broken) {
    out.push({
      severity: "error",
      file: join(OUTBOX_FILES.bodies, file),
      message:
        b.problem === "missing"
          ? `the body file of ${b.rows} pending row${b.rows > 1 ? "s" : ""} is missing: those events cannot be delivered`
          : `the body of ${b.rows} pending row${b.rows > 1 ? "s" : ""} does not match its recorded length and sha256 (altered): those events cannot be delivered`,
      fix: "start the daemon: it ends those rows dead (delivered_rejected) and logs them; push the events again from their source if they are still wanted (svc sentinel status shows the dead rows)",
    });
  }
  for (const [sentinelId, rows] of pendingOfUnknown) {
    out.push({
      severity: "info",
      file: OUTBOX_FILES.snapshot,
      message: `${rows} pending row${rows > 1 ? "s" : ""} of sentinel ${sentinelId}, which is not in sentinels.json (removed)`,
      fix: "nothing to do: the daemon ends them dead (sentinel_removed) when it tries them",
    });
  }
  for (const file of [...bodyFiles].sort()) {
    if (!referenced.has(file)) {
      out.push({
        severity: "info",
        file: join(OUTBOX_FILES.bodies, file),
        message: "a body file no row references (left by a compaction a crash interrupted, or by reaping)",
        fix: "nothing to do: the next daemon start deletes it",
      });
    }
  }

  // Rows hold event bodies: every outbox file is created 0600.
  for (const n of [OUTBOX_FILES.snapshot, ...files.journals.map((j) => j.file)])
    out.push(...(await secretModeFinding(home, join(home, n))));
  for (const f of [...bodyFiles].sort()) out.push(...(await secretModeFinding(home, join(bodies.dir, f))));
  out.push(...(await damagedCopyFindings(home, home, "sentinel-webhook-outbox.")));
  return out;
}
