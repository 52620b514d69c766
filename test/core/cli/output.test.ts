import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { reportError, warn } from "../../../core/cli/output.js";

describe("colour follows the stream written to", () => {
  const saved = {
    stdout: process.stdout.isTTY,
    stderr: process.stderr.isTTY,
    NO_COLOR: process.env.NO_COLOR,
    FORCE_COLOR: process.env.FORCE_COLOR,
  };
  let written: string[];
  beforeEach(() => {
    delete process.env.NO_COLOR;
    delete process.env.FORCE_COLOR;
    written = [];
    vi.spyOn(process.stderr, "write").mockImplementation(
      (chunk: string | Uint8Array) => (written.push(String(chunk)), true),
    );
  });
  afterEach(() => {
    vi.restoreAllMocks();
    process.stdout.isTTY = saved.stdout;
    process.stderr.isTTY = saved.stderr;
    for (const k of ["NO_COLOR", "FORCE_COLOR"] as const) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });

  it("stderr on a terminal, stdout piped: warnings and errors are coloured", () => {
    process.stdout.isTTY = false;
    process.stderr.isTTY = true;
    warn("w");
    reportError(new Error("e"));
    expect(written[0]).toMatch(/^\u001b\[33mwarning:/);
    expect(written[1]).toMatch(/^\u001b\[31merror:/);
  });

  it("stdout on a terminal, stderr piped (2>log): no escapes in the log", () => {
    process.stdout.isTTY = true;
    process.stderr.isTTY = false;
    warn("w");
    reportError(new Error("e"));
    expect(written.join("")).not.toMatch(/\u001b\[/);
  });
});
