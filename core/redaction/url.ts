/**
 * URL credentials out of every listing: a URL's userinfo becomes `***@`, each query value and a
 * fragment become `REDACTED` (query keys are kept, so a reader still sees which parameters the URL
 * carries). The scheme, host, port and path are kept: they say where it goes. The one function
 * every listing of a URL uses (sentinel projections, the CLI's echoes); what is sent is the real URL.
 */

export const REDACTED = "REDACTED";

/** `url` with its userinfo, query values and fragment redacted; a text that is no URL is redacted by shape. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return redactByShape(url);
  }
  if (parsed.username || parsed.password) {
    parsed.username = "***";
    parsed.password = "";
  }
  if (parsed.hash) parsed.hash = REDACTED;
  const out = parsed.toString();
  if (!parsed.search) return out;
  // Rebuilt by hand: URLSearchParams would re-encode the keys (and drop a key's missing `=`).
  const query = parsed.search
    .slice(1)
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      return eq < 0 || eq === pair.length - 1 ? pair : `${pair.slice(0, eq)}=${REDACTED}`;
    })
    .join("&");
  // Spliced, not String.replace: a replacement string expands `$&` and `$'`, which a query key may
  // hold (`?t=secret&$&=1` would put the whole unredacted query back).
  const at = out.indexOf(parsed.search);
  return `${out.slice(0, at)}?${query}${out.slice(at + parsed.search.length)}`;
}

/** Every absolute URL (`scheme://…`) in `text`, redacted as {@link redactUrl} does. */
export function redactUrlsIn(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi, (u) => redactUrl(u));
}

/** A copy of `value` (JSON-like) with every URL in its strings redacted, at any depth. */
export function redactUrlsDeep(value: unknown): unknown {
  if (typeof value === "string") return redactUrlsIn(value);
  if (Array.isArray(value)) return value.map(redactUrlsDeep);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactUrlsDeep(v)]));
  return value;
}

/** For a text that does not parse: everything between `//` and `@`, and everything after `?` or `#`. */
function redactByShape(text: string): string {
  return text
    .replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, `$1***@`)
    .replace(/[?#].*$/s, (rest) => `${rest[0]}${REDACTED}`);
}
