import { appendFile, readFile, stat, truncate } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppendJournal } from "../../../core/storage/append-journal.js";
import { checkedLine } from "../../../core/storage/checked-lines.js";
import { lengthRecordPath, readJournalLength } from "../../../core/storage/journal-length.js";
import { checkJournalAtStart, lossRecordPath, readJournalLosses } from "../../../core/storage/journal-loss.js";
import { makeTempHome } from "../../support/cli.js";

let home: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-journal-length-")));
afterEach(() => cleanup());

const line = (seq: number) => checkedLine(JSON.stringify({ seq, pad: "x".repeat(40) }));

/** A journal of records 1..n, each appended (and acknowledged) on its own, closed. */
async function journalOf(path: string, n: number): Promise<void> {
  const j = await AppendJournal.open(path, { cutTornTail: true });
  for (let seq = 1; seq <= n; seq++) await j.append(line(seq), undefined, { seq });
  await j.close();
}

/** The byte offset where line `k` (1-based) starts. */
async function offsetOfLine(path: string, k: number): Promise<number> {
  const text = await readFile(path, "utf8");
  return (
    Buffer.byteLength(
      text
        .split("\n")
        .slice(0, k - 1)
        .join("\n"),
    ) + (k > 1 ? 1 : 0)
  );
}

describe("a journal that knows its length", () => {
  it("whole lines cut from its end: a start finds how many acknowledged records are missing, and which", async () => {
    const path = join(home, "j.journal");
    await journalOf(path, 30);
    expect(await readJournalLength(path)).toMatchObject({ lines: 30, bytes: (await stat(path)).size, seq: 30 });
    // The last 10 whole lines removed: no torn tail, nothing that looks wrong in the file itself.
    await truncate(path, await offsetOfLine(path, 21));

    const found = await checkJournalAtStart(path, { lastPresentSeq: 20, now: Date.parse("2026-12-01T00:00:00Z") });
    expect(found.check?.missing).toEqual({ records: 10, bytes: 10 * line(30).length, lastSeq: 30 });
    expect(found.check?.torn).toEqual({ bytes: 0, acknowledged: false });
    expect(found.loss).toMatchObject({ fresh: true, loss: { records: 10, seqs: { from: 21, to: 30 } } });
    // Kept until acknowledged, and kept once however many starts find it.
    expect(await readJournalLosses(path)).toEqual([found.loss!.loss]);
    expect((await checkJournalAtStart(path, { lastPresentSeq: 20 })).loss?.fresh).toBe(false);

    // Opening sets the record to the file as found and goes on counting from there.
    const j = await AppendJournal.open(path, { cutTornTail: true });
    expect(j.found?.missing?.records).toBe(10);
    await j.append(line(21), undefined, { seq: 21 });
    await j.close();
    expect(await readJournalLength(path)).toMatchObject({ lines: 21, seq: 21 });
    const after = await checkJournalAtStart(path);
    expect(after.loss).toBeUndefined();
    expect(after.earlier).toHaveLength(1);
    expect((await stat(lossRecordPath(path))).mode & 0o777).toBe(0o600);
    expect((await stat(lengthRecordPath(path))).mode & 0o777).toBe(0o600);
    // Both slots were written when the record was created: later writes need no free space.
    expect((await stat(lengthRecordPath(path))).size).toBeGreaterThan(4096);
  });

  it("cut inside an acknowledged line (to 97 %): the torn tail is part of the loss, not a write never acknowledged", async () => {
    const path = join(home, "j.journal");
    await journalOf(path, 25);
    const size = (await stat(path)).size;
    await truncate(path, Math.floor(size * 0.97));

    const found = await checkJournalAtStart(path, { lastPresentSeq: 24 });
    expect(found.check?.torn.bytes).toBeGreaterThan(0);
    expect(found.check?.torn.acknowledged).toBe(true);
    expect(found.loss?.loss).toMatchObject({ records: 1, seqs: { from: 25, to: 25 } });
    const j = await AppendJournal.open(path, { cutTornTail: true });
    await j.close();
    expect((await readFile(path, "utf8")).endsWith("\n")).toBe(true);
    expect(await readJournalLength(path)).toMatchObject({ lines: 24 });
  });

  it("a write never acknowledged (bytes past the record: a kill -9 between the data and its record) is no loss", async () => {
    const path = join(home, "j.journal");
    await journalOf(path, 5);
    await appendFile(path, `${line(6)}${line(7).slice(0, 20)}`);
    const found = await checkJournalAtStart(path);
    expect(found.loss).toBeUndefined();
    expect(found.check?.torn).toEqual({ bytes: 20, acknowledged: false });
    const j = await AppendJournal.open(path, { cutTornTail: true });
    await j.close();
    expect(await readJournalLength(path)).toMatchObject({ lines: 6, bytes: 6 * line(1).length });
    expect(await readJournalLosses(path)).toEqual([]);
  });

  it("a journal from before length records loads without an alarm and starts recording", async () => {
    const path = join(home, "old.journal");
    await appendFile(path, [1, 2, 3].map(line).join(""));
    expect(await readJournalLength(path)).toBeUndefined();
    expect((await checkJournalAtStart(path)).loss).toBeUndefined();
    const j = await AppendJournal.open(path, { cutTornTail: true });
    expect(j.found?.missing).toBeUndefined();
    await j.close();
    expect(await readJournalLength(path)).toMatchObject({ lines: 3 });
    await truncate(path, 2 * line(1).length);
    expect((await checkJournalAtStart(path)).loss?.loss.records).toBe(1);
  });

  it("a truncation or a rotation is never taken for a loss", async () => {
    const path = join(home, "j.journal");
    const j = await AppendJournal.open(path);
    for (let seq = 1; seq <= 5; seq++) await j.append(line(seq), undefined, { seq });
    await j.exclusive(() => j.truncate(line(5), 5));
    expect(await readJournalLength(path)).toMatchObject({ lines: 1, seq: 5 });
    await j.append(line(6), undefined, { seq: 6 });
    await j.exclusive(() => j.rotate(`${path}.6`));
    await j.append(line(7), undefined, { seq: 7 });
    await j.close();
    expect(await readJournalLength(path)).toMatchObject({ lines: 1, bytes: line(7).length, seq: 7 });
    expect((await checkJournalAtStart(path)).loss).toBeUndefined();
    expect((await checkJournalAtStart(`${path}.6`)).loss).toBeUndefined();
  });
});
