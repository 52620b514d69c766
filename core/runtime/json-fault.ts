/**
 * Where the first syntax fault in a text that is not JSON is, described without quoting the text.
 * V8's own `JSON.parse` message quotes the input around the fault, and such inputs (a request
 * body, config.json) often hold secrets.
 */

/** Where (and roughly what) the first syntax fault in `text` is, without quoting `text`. */
export function jsonFault(text: string): string {
  const at = faultOffset(text);
  if (at < 0) return "the parser refused it";
  if (at >= text.length) return `it ends at character ${text.length} before the JSON value is complete`;
  const code = text.charCodeAt(at);
  const what = code < 0x20 ? "a control character" : code > 0x7e ? "a non-ASCII character" : "an unexpected character";
  return `${what} at position ${at} (line ${lineOf(text, at)})`;
}

/** How many leading characters of `lit` appear at `text[at]`. */
function matched(text: string, at: number, lit: string): number {
  let k = 0;
  while (k < lit.length && text[at + k] === lit[k]) k++;
  return k;
}

function lineOf(text: string, at: number): number {
  let line = 1;
  for (let i = 0; i < at; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERALS = ["true", "false", "null"];

/**
 * The offset of the first character at which `text` stops being JSON: `text.length` when it ends
 * too early, -1 when this scan finds no fault. Only called once `JSON.parse` has failed, so it
 * builds nothing.
 */
function faultOffset(text: string): number {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const expect = (c: string) => {
    ws();
    if (text[i] !== c) fail();
    i++;
  };
  const string = () => {
    if (text[i] !== '"') fail();
    i++;
    for (;;) {
      if (i >= text.length) fail();
      const c = text.charCodeAt(i);
      if (c === 0x22) return void i++;
      if (c < 0x20) fail();
      if (c === 0x5c) {
        i++;
        const e = text[i];
        if (e === "u") {
          i++;
          for (let k = 0; k < 4; k++, i++) if (!/[0-9a-fA-F]/.test(text[i] ?? "")) fail();
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail();
      } else i++;
    }
  };
  /** An object's members or an array's elements, from its opening character through `close`. */
  const items = (close: string, item: () => void) => {
    i++;
    ws();
    if (text[i] === close) return void i++;
    for (;;) {
      item();
      ws();
      if (text[i] === ",") i++;
      else if (text[i] === close) return void i++;
      else fail();
    }
  };
  const member = () => {
    ws();
    string();
    expect(":");
    value();
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") return items("}", member);
    if (c === "[") return items("]", value);
    if (c === '"') return string();
    NUMBER.lastIndex = i;
    const n = NUMBER.exec(text);
    if (n) return void (i += n[0].length);
    // A literal cut short or misspelt: the fault is where it stops matching.
    const literal = LITERALS.find((lit) => text.startsWith(lit, i));
    if (literal) return void (i += literal.length);
    i += Math.max(...LITERALS.map((lit) => matched(text, i, lit)));
    fail();
  };
  try {
    value();
    ws();
    return i < text.length ? i : -1;
  } catch (at) {
    return at as number;
  }
}
