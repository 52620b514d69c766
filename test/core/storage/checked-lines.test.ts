import { describe, expect, it } from "vitest";
import { checkedLine, checkedLinesBytes, readCheckedLines } from "../../../core/storage/checked-lines.js";

describe("checked lines as bytes", () => {
  it("encodes records into the same bytes as checkedLine, multi-byte text included, and reads them back", () => {
    const texts = ['{"a":1}', '{"é":"日本","emoji":"🙂"}', "", '{"pad":"' + "x".repeat(5000) + '"}'];
    const bytes = checkedLinesBytes(texts);
    expect(bytes.equals(Buffer.from(texts.map(checkedLine).join(""), "utf8"))).toBe(true);
    const read = readCheckedLines(bytes.toString("utf8"));
    expect(read.damaged).toEqual([]);
    expect(read.records.map((r) => r.text)).toEqual(texts);
  });
});
