/**
 * Byte helpers shared by the daemon (Node) and the pair page (browser): base64url, UTF-8,
 * concatenation. No Node imports: this file is served to the browser as it is compiled.
 */
const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

export type Bytes = Uint8Array<ArrayBuffer>;

export function utf8(s: string): Bytes {
  return enc.encode(s) as Bytes;
}

export function fromUtf8(b: Uint8Array): string {
  return dec.decode(b);
}

export function concat(...parts: Uint8Array[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function toB64u(b: Uint8Array): string {
  let s = "";
  for (const x of b) s += String.fromCharCode(x);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Decodes base64url; `undefined` when `s` is not base64url. */
export function fromB64u(s: string): Bytes | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) return undefined;
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (s.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function toHex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i]! ^ b[i]!;
  return d === 0;
}
