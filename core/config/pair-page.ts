/**
 * The pair page template (`pairing.pairPage`): its rule and its expansion. Its own module, with no
 * config imports, so that the schema can use the rule without importing the config service back.
 */

/** The pair page URL for a daemon fingerprint: `{fp}` substituted (lower-cased, it sits in a hostname). */
export function pairPageUrl(template: string, fingerprint: string): string {
  return template.replaceAll("{fp}", fingerprint.toLowerCase());
}

/** A plain http(s) URL, or a template with `{fp}` in its hostname only (one browser origin per daemon). */
export function isPairPage(v: string): boolean {
  const marker = "zzfpzz";
  try {
    const u = new URL(v.replaceAll("{fp}", marker));
    if (u.protocol !== "http:" && u.protocol !== "https:") return false;
    if (!v.includes("{fp}")) return true;
    return u.hostname.includes(marker) && !(u.pathname + u.search + u.hash).includes(marker);
  } catch {
    return false;
  }
}
