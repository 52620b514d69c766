/**
 * What the scripted model answers, whichever API asked. Each API module turns its request into a
 * {@link Conversation} (turns in order, plus the tools offered) and renders the {@link Reply}.
 *
 * The grammar of the one scripted instruction (see {@link writeFilePrompt}):
 *
 *     write file <path> with text <text>
 *
 * `<path>` has no whitespace (pass an absolute path: Claude Code's `Write` and Gemini's `write_file`
 * want one); `<text>` is the rest of that line. The model answers it with a call of the first
 * file-writing tool the request offers, which leaves the file holding `<text>` plus a newline; once
 * the conversation holds a tool result after the instruction, it answers `done: wrote <path>`.
 * Any other prompt, and every request offering no file-writing tool (titles, summaries, quota checks),
 * gets the text `ok: <first 40 characters of the prompt>`.
 */

export interface Instruction {
  path: string;
  text: string;
}

export type Turn = { kind: "user-text"; text: string } | { kind: "tool-result" } | { kind: "assistant" };

export interface OfferedTool {
  name: string;
  /** "custom" = OpenAI Responses freeform tool (Codex's `apply_patch` for some models). */
  kind: "function" | "custom";
}

export interface Conversation {
  turns: Turn[];
  tools: OfferedTool[];
}

export type Reply =
  | { kind: "text"; text: string }
  | { kind: "tool"; name: string; toolKind: "function" | "custom"; input: Record<string, unknown> | string };

const INSTRUCTION = /write file (\S+) with text ([^\n]*)/;

/** The prompt that makes the scripted model write `text` (one line) into `path`. */
export function writeFilePrompt(path: string, text: string): string {
  if (/\s/.test(path)) throw new Error(`writeFilePrompt: path must not contain whitespace: ${path}`);
  if (text.includes("\n")) throw new Error("writeFilePrompt: text must be one line");
  return `write file ${path} with text ${text}`;
}

export function parseInstruction(text: string): Instruction | undefined {
  const match = INSTRUCTION.exec(text);
  return match ? { path: match[1]!, text: match[2]! } : undefined;
}

/** The final text the model sends after the tool ran. */
export const doneText = (path: string): string => `done: wrote ${path}`;

/** The text reply to anything but the instruction. */
export const okText = (prompt: string): string => `ok: ${prompt.trim().slice(0, 40)}`;

export function decide(conversation: Conversation): Reply {
  const { turns } = conversation;
  const last = findLastIndex(turns, (turn) => turn.kind === "user-text");
  const prompt = last >= 0 ? (turns[last] as { text: string }).text : "";
  const instruction = parseInstruction(prompt);
  if (!instruction) return { kind: "text", text: okText(lastLine(prompt)) };
  if (turns.slice(last + 1).some((turn) => turn.kind === "tool-result")) {
    return { kind: "text", text: doneText(instruction.path) };
  }
  return writeCall(instruction, conversation.tools) ?? { kind: "text", text: okText(prompt) };
}

/** The call of the first offered tool, by preference, that can write the file. */
function writeCall(instruction: Instruction, tools: OfferedTool[]): Reply | undefined {
  for (const writer of WRITERS) {
    const tool = tools.find((offered) => offered.name === writer.name);
    if (tool)
      return { kind: "tool", name: tool.name, toolKind: tool.kind, input: writer.input(instruction, tool.kind) };
  }
  return undefined;
}

interface Writer {
  name: string;
  input(instruction: Instruction, kind: OfferedTool["kind"]): Record<string, unknown> | string;
}

const WRITERS: Writer[] = [
  // Claude Code
  { name: "Write", input: ({ path, text }) => ({ file_path: path, content: `${text}\n` }) },
  // Gemini CLI
  { name: "write_file", input: ({ path, text }) => ({ file_path: path, content: `${text}\n` }) },
  // opencode
  { name: "write", input: ({ path, text }) => ({ filePath: path, content: `${text}\n` }) },
  // Codex: freeform (custom) or JSON function apply_patch, else a shell tool
  {
    name: "apply_patch",
    input: (instruction, kind) =>
      kind === "custom" ? addFilePatch(instruction) : { input: addFilePatch(instruction) },
  },
  // Codex "code mode" (default for its newest models): a freeform `exec` tool running JavaScript that
  // calls the nested tools, e.g. `tools.apply_patch(patch)`.
  { name: "exec", input: (instruction) => `await tools.apply_patch(${JSON.stringify(addFilePatch(instruction))});\n` },
  { name: "shell", input: (instruction) => ({ command: ["bash", "-lc", shellWrite(instruction)] }) },
  { name: "shell_command", input: (instruction) => ({ command: shellWrite(instruction) }) },
  { name: "exec_command", input: (instruction) => ({ cmd: shellWrite(instruction) }) },
];

export function addFilePatch({ path, text }: Instruction): string {
  return `*** Begin Patch\n*** Add File: ${path}\n+${text}\n*** End Patch\n`;
}

function shellWrite({ path, text }: Instruction): string {
  return `printf '%s\\n' ${shellQuote(text)} > ${shellQuote(path)}`;
}

const shellQuote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;

function lastLine(text: string): string {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  return lines.at(-1) ?? "";
}

function findLastIndex<T>(items: T[], test: (item: T) => boolean): number {
  for (let index = items.length - 1; index >= 0; index--) if (test(items[index]!)) return index;
  return -1;
}

/** Rough token count for usage numbers: 4 characters a token. */
export const roughTokens = (value: unknown): number => Math.max(1, Math.ceil(JSON.stringify(value ?? "").length / 4));

/**
 * A small value that satisfies a JSON schema (OpenAPI-style upper-case types too): the first enum
 * value, "ok", 1, false, [] or an object with every property. For side calls that ask for JSON
 * (Gemini CLI's model router wants `{complexity_reasoning, complexity_score}`).
 */
export function valueForSchema(schema: any): unknown {
  if (!schema || typeof schema !== "object") return "ok";
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = String(Array.isArray(schema.type) ? schema.type[0] : (schema.type ?? "object")).toLowerCase();
  if (type === "string") return "ok";
  if (type === "integer" || type === "number") return schema.minimum ?? 1;
  if (type === "boolean") return false;
  if (type === "array") return [];
  if (type === "null") return null;
  const properties: Record<string, unknown> = schema.properties ?? {};
  return Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, valueForSchema(value)]));
}
