import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bodySource, parseGh, withValue, type ParsedFlag } from "../../../core/workspaces/gh-args.js";
import { appendFooter, provenanceFooter } from "../../../core/workspaces/gh-footer.js";

const src = (...args: string[]) => bodySource(args);

describe("gh-args: the body of gh pr create / gh pr edit, found as gh finds it", () => {
  it("-b and --body in every form: the value and where it is written", () => {
    expect(src("pr", "create", "-b", "X")).toEqual({
      kind: "arg",
      command: "create",
      at: { index: 3, prefix: "" },
      value: "X",
    });
    expect(src("pr", "create", "-bX")).toMatchObject({ at: { index: 2, prefix: "-b" }, value: "X" });
    expect(src("pr", "create", "-b=X")).toMatchObject({ at: { index: 2, prefix: "-b=" }, value: "X" });
    expect(src("pr", "create", "-b==X")).toMatchObject({ at: { index: 2, prefix: "-b=" }, value: "=X" });
    expect(src("pr", "create", "-b=")).toMatchObject({ at: { index: 2, prefix: "-b" }, value: "=" });
    expect(src("pr", "new", "--body", "X")).toMatchObject({ at: { index: 3, prefix: "" }, value: "X" });
    expect(src("pr", "create", "--body=a=b")).toMatchObject({ at: { index: 2, prefix: "--body=" }, value: "a=b" });
    expect(src("pr", "create", "--body=")).toMatchObject({ at: { index: 2, prefix: "--body=" }, value: "" });
    expect(src("pr", "create", "-db", "X")).toMatchObject({ at: { index: 3, prefix: "" }, value: "X" });
    expect(src("pr", "create", "-wdbX")).toMatchObject({ at: { index: 2, prefix: "-wdb" }, value: "X" });
    expect(src("pr", "create", "-b", "A", "--body", "B")).toMatchObject({ at: { index: 5 }, value: "B" });
  });

  it("-F and --body-file in every form, `-` for stdin; an empty path is no body file, as in gh", () => {
    expect(src("pr", "create", "-F", "f.md")).toEqual({
      kind: "file",
      command: "create",
      at: { index: 3, prefix: "" },
      path: "f.md",
    });
    expect(src("pr", "create", "-Ff.md")).toMatchObject({ kind: "file", at: { index: 2, prefix: "-F" }, path: "f.md" });
    expect(src("pr", "create", "-F=f.md")).toMatchObject({
      kind: "file",
      at: { index: 2, prefix: "-F=" },
      path: "f.md",
    });
    expect(src("pr", "create", "--body-file", "f.md")).toMatchObject({ kind: "file", at: { index: 3, prefix: "" } });
    expect(src("pr", "create", "--body-file=f.md")).toMatchObject({
      kind: "file",
      at: { index: 2, prefix: "--body-file=" },
    });
    expect(src("pr", "create", "-F", "-")).toEqual({ kind: "stdin", command: "create", at: { index: 3, prefix: "" } });
    expect(src("pr", "create", "-F-")).toMatchObject({ kind: "stdin", at: { index: 2, prefix: "-F" } });
    expect(src("pr", "create", "--body-file=-")).toMatchObject({
      kind: "stdin",
      at: { index: 2, prefix: "--body-file=" },
    });
    expect(src("pr", "create", "-dF", "-")).toMatchObject({ kind: "stdin", at: { index: 3, prefix: "" } });
    // gh reads the file over --body in create; an emptied --body-file is no file.
    expect(src("pr", "create", "--body-file", "f.md", "--body", "X")).toMatchObject({ kind: "file", path: "f.md" });
    expect(src("pr", "create", "-F", "f.md", "-F", "", "-b", "X")).toMatchObject({ kind: "arg", value: "X" });
  });

  it("a flag's value that looks like -b, --body, -F or -- is that flag's value, never the body", () => {
    expect(src("pr", "create", "--title", "-b", "--body", "real")).toMatchObject({ at: { index: 5 }, value: "real" });
    expect(src("pr", "create", "--title", "--body", "-b", "real")).toMatchObject({ at: { index: 5 }, value: "real" });
    expect(src("pr", "create", "-t", "-b")).toEqual({ kind: "editor" });
    expect(src("pr", "create", "-t-b", "-H", "--body")).toEqual({ kind: "editor" });
    expect(src("pr", "create", "--label", "-F", "-a", "--body-file", "-r", "--", "-b", "X")).toMatchObject({
      kind: "arg",
      at: { index: 9 },
      value: "X",
    });
    expect(src("pr", "create", "-T", "-F", "--milestone=-b", "-p", "-b")).toEqual({ kind: "editor" });
    expect(src("pr", "edit", "--add-label", "-b", "--remove-reviewer", "--body", "-b", "X")).toMatchObject({
      command: "edit",
      at: { index: 7 },
    });
    const p = parseGh(["pr", "create", "--title", "-b", "--body", "real"]);
    expect(p.kind === "pr" && p.flags).toEqual([
      { name: "title", value: "-b", at: { index: 3, prefix: "" } },
      { name: "body", value: "real", at: { index: 5, prefix: "" } },
    ]);
  });

  it("`--` ends the flags: what follows is arguments (which gh pr create refuses)", () => {
    expect(src("pr", "create", "--", "-b", "X")).toEqual({
      kind: "none",
      reason: "gh pr create takes no arguments, got 2",
    });
    expect(src("pr", "edit", "-b", "X", "--", "--body")).toMatchObject({
      kind: "arg",
      command: "edit",
      at: { index: 3 },
    });
  });

  it("the command is found as cobra finds it, past -R/--repo and its value", () => {
    expect(src("-R", "o/r", "pr", "create", "-b", "X")).toMatchObject({ at: { index: 5 } });
    expect(src("pr", "-R", "o/r", "create", "-b", "X")).toMatchObject({ at: { index: 5 } });
    // --repo's value "create" is not the subcommand; the second "create" is.
    expect(src("pr", "--repo", "create", "create", "-b", "X")).toMatchObject({ at: { index: 5 } });
    expect(parseGh(["pr", "--repo", "create", "create", "-b", "X"])).toMatchObject({
      flags: [
        { name: "repo", value: "create" },
        { name: "body", value: "X" },
      ],
    });
    for (const other of [
      ["pr", "view", "-b", "X"],
      ["issue", "create", "-b", "X"],
      ["pr", "comment", "1", "--body", "X"],
      ["api", "-F", "a=b"],
      ["pr", "--", "create", "-b", "X"],
    ]) {
      expect(bodySource(other)).toEqual({ kind: "none" });
    }
  });

  it("gh pr edit: one argument; --body and --body-file together are refused, as gh refuses them", () => {
    expect(src("pr", "edit", "12", "--body-file=f")).toMatchObject({ kind: "file", command: "edit", at: { index: 3 } });
    expect(src("pr", "edit", "12", "-b", "X", "-F", "f")).toEqual({
      kind: "none",
      reason: "gh pr edit refuses --body with --body-file",
    });
    expect(src("pr", "edit", "12", "13", "-b", "X")).toEqual({
      kind: "none",
      reason: "gh pr edit takes one argument, got 2",
    });
    expect(src("pr", "edit", "12")).toEqual({ kind: "none" });
  });

  it("no body: the editor, unless gh writes it (--fill*, --web); a given body is stamped even with --fill", () => {
    expect(src("pr", "create")).toEqual({ kind: "editor" });
    expect(src("pr", "create", "--fill")).toEqual({ kind: "none" });
    expect(src("pr", "create", "-w")).toEqual({ kind: "none" });
    expect(src("pr", "create", "--fill-first")).toEqual({ kind: "none" });
    expect(src("pr", "create", "--fill", "-e")).toEqual({ kind: "editor" });
    expect(src("pr", "create", "--fill=false")).toEqual({ kind: "editor" });
    expect(src("pr", "create", "-f", "-b", "X")).toMatchObject({ kind: "arg", value: "X" });
  });

  it("a command line gh refuses, or help, is left alone (with the reason when gh would refuse it)", () => {
    expect(src("pr", "create", "--bogus", "-b", "X")).toEqual({
      kind: "none",
      reason: "gh pr create will refuse it (unknown flag: --bogus)",
    });
    expect(src("pr", "create", "-qSECRET")).toEqual({
      kind: "none",
      reason: "gh pr create will refuse it (unknown shorthand flag: 'q')",
    });
    expect(src("pr", "create", "-b")).toEqual({
      kind: "none",
      reason: "gh pr create will refuse it (flag needs an argument: -b)",
    });
    expect(src("pr", "create", "-t", "T", "--body")).toEqual({
      kind: "none",
      reason: "gh pr create will refuse it (flag needs an argument: --body)",
    });
    expect(src("pr", "create", "--draft=maybe", "-b", "X")).toMatchObject({
      kind: "none",
      reason: expect.stringContaining("invalid boolean value for --draft"),
    });
    expect(src("pr", "create", "---body", "X")).toMatchObject({
      kind: "none",
      reason: expect.stringContaining("bad flag syntax"),
    });
    expect(src("pr", "create", "-h", "-b", "X")).toEqual({ kind: "none" });
    expect(src("pr", "create", "--help", "-b", "X")).toEqual({ kind: "none" });
  });

  it('withValue replaces only the body\'s value, and refuses a form that cannot hold a new value (-b= is the body "=")', () => {
    const argv = ["pr", "create", "-t", "-b", "-dbOld", "-l", "x"];
    const s = bodySource(argv);
    expect(s.kind === "arg" && withValue(argv, s.at, "New")).toEqual(["pr", "create", "-t", "-b", "-dbNew", "-l", "x"]);
    const eq = ["pr", "create", "-b="];
    const e = bodySource(eq);
    expect(e.kind === "arg" && withValue(eq, e.at, "=\n\nfooter")).toBeUndefined();
    expect(e.kind === "arg" && withValue(eq, e.at, "=")).toEqual(eq);
  });
});

// ---- property: a model of gh's command line, rendered to argv, knows where the body is ----

interface FlagModel {
  long: string;
  short?: string;
  bool?: true;
}
const VALUE_FLAGS: FlagModel[] = [
  { long: "title", short: "t" },
  { long: "body", short: "b" },
  { long: "body-file", short: "F" },
  { long: "base", short: "B" },
  { long: "head", short: "H" },
  { long: "label", short: "l" },
  { long: "reviewer", short: "r" },
  { long: "repo", short: "R" },
  { long: "milestone", short: "m" },
  { long: "template", short: "T" },
  { long: "recover" },
];
const EDIT_VALUE_FLAGS: FlagModel[] = [
  { long: "title", short: "t" },
  { long: "body", short: "b" },
  { long: "body-file", short: "F" },
  { long: "base", short: "B" },
  { long: "repo", short: "R" },
  { long: "milestone", short: "m" },
  { long: "add-label" },
  { long: "remove-reviewer" },
];
const BOOL_SHORTS = ["d", "e"]; // create's -d/--draft, -e/--editor (no --fill/--web: they change nothing once a body is given)
const TRICKY = [
  "-b",
  "--body",
  "-F",
  "--body-file",
  "-",
  "--",
  "=",
  "-bX",
  "--body=x",
  "-F-",
  "-h",
  "",
  " ",
  "pr",
  "create",
  "a=b",
];
const value = fc.oneof(fc.constantFrom(...TRICKY), fc.string({ maxLength: 12 }));

type Token =
  | { flag: FlagModel; value: string; form: number; cluster: string }
  | { bool: string; form: number }
  | { positional: string };

function token(command: "create" | "edit"): fc.Arbitrary<Token> {
  const flags = command === "create" ? VALUE_FLAGS : EDIT_VALUE_FLAGS;
  const positional = fc.record({
    positional: fc.oneof(
      fc.constantFrom("12", "-", ""),
      fc.string({ maxLength: 6 }).filter((s) => !s.startsWith("-")),
    ),
  });
  const valued = fc.record({
    flag: fc.constantFrom(...flags),
    value,
    form: fc.nat(4),
    cluster: fc.subarray(command === "create" ? BOOL_SHORTS : []).map((c) => c.join("")),
  });
  if (command === "edit") return fc.oneof({ weight: 6, arbitrary: valued }, { weight: 1, arbitrary: positional });
  const bool = fc.record({ bool: fc.constantFrom("d", "draft", "e", "editor"), form: fc.nat(2) });
  return fc.oneof(
    { weight: 12, arbitrary: valued },
    { weight: 2, arbitrary: bool },
    { weight: 1, arbitrary: positional },
  );
}

/** Renders tokens after `pr <command>`; returns the argv and the flags gh sets (the model's truth). */
function render(
  command: "create" | "edit",
  tokens: Token[],
): { argv: string[]; flags: ParsedFlag[]; positional: number[] } {
  const argv = ["pr", command];
  const flags: ParsedFlag[] = [];
  const positional: number[] = [];
  for (const t of tokens) {
    if ("positional" in t) {
      positional.push(argv.push(t.positional) - 1);
    } else if ("bool" in t) {
      const long = t.bool.length > 1 ? t.bool : t.bool === "d" ? "draft" : "editor";
      const dash = t.bool.length > 1 ? "--" : "-";
      if (t.form === 0) {
        flags.push({ name: long, value: "true" });
        argv.push(dash + t.bool);
      } else {
        const v = t.form === 1 ? "false" : "true";
        flags.push({ name: long, value: v, at: { index: argv.length, prefix: `${dash}${t.bool}=` } });
        argv.push(`${dash}${t.bool}=${v}`);
      }
    } else {
      const { flag, value: v, cluster } = t;
      const short = flag.short;
      // 0: --long VALUE, 1: --long=VALUE, 2: -sVALUE, 3: -s=VALUE, 4: -s VALUE (2-4 fall back to 0 without a shorthand or a value they can hold)
      let form = short ? t.form : t.form % 2;
      if (form === 2 && (v === "" || v.startsWith("="))) form = 4;
      if (form === 3 && v === "") form = 4;
      for (const c of form >= 2 ? cluster : "") flags.push({ name: c === "d" ? "draft" : "editor", value: "true" });
      const shortPrefix = `-${form >= 2 ? cluster : ""}${short}`;
      if (form === 0 || form === 4) {
        argv.push(form === 0 ? `--${flag.long}` : shortPrefix);
        flags.push({ name: flag.long, value: v, at: { index: argv.length, prefix: "" } });
        argv.push(v);
      } else {
        const prefix = form === 1 ? `--${flag.long}=` : form === 2 ? shortPrefix : `${shortPrefix}=`;
        flags.push({ name: flag.long, value: v, at: { index: argv.length, prefix } });
        argv.push(prefix + v);
      }
    }
  }
  return { argv, flags, positional };
}

describe("gh-args property: stamping never changes anything but the body's value", () => {
  const FOOTER = provenanceFooter({ sessionId: "ses_P", adapter: "a", workspace: "/w" });
  for (const command of ["create", "edit"] as const) {
    it(`gh pr ${command}: the parser reads the model's flags, finds the model's body, and stamping changes only its value`, () => {
      fc.assert(
        fc.property(fc.array(token(command), { maxLength: 8 }), (tokens) => {
          const m = render(command, tokens);
          const parsed = parseGh(m.argv);
          expect(parsed).toEqual({ kind: "pr", command, flags: m.flags, positional: m.positional, help: false });
          const file = m.flags.findLast((f) => f.name === "body-file");
          const body = m.flags.findLast((f) => f.name === "body");
          const target = file && file.value !== "" ? file : body;
          const s = bodySource(m.argv);
          const refused =
            m.positional.length > (command === "create" ? 0 : 1) ||
            (command === "edit" && target === file && body !== undefined);
          if (!target || refused) {
            expect(s.kind === "none" || s.kind === "editor").toBe(true);
            return;
          }
          expect(s).toMatchObject({ at: target.at });
          const stamped = target === file ? "/tmp/svc-stamped.md" : appendFooter(target.value, FOOTER);
          const out = withValue(m.argv, target.at!, stamped);
          expect(out).toBeDefined();
          out!.forEach((a, i) => expect(a).toBe(i === target.at!.index ? target.at!.prefix + stamped : m.argv[i]));
          expect(parseGh(out!)).toEqual({
            ...parsed,
            flags: m.flags.map((f) => (f === target ? { ...f, value: stamped } : f)),
          });
        }),
        { numRuns: 500 },
      );
    });
  }
});
