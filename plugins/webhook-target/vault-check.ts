/**
 * The vault's offline check for `svc doctor` (read-only): `sentinels-secrets.json` parses, is
 * mode 0600, and holds the secret of every webhook sentinel. Messages never quote the file (it
 * holds secrets). See docs/operations.md.
 */
import { join } from "node:path";
import type { DoctorFinding, SentinelView } from "../../core/plugin-api/index.js";
import { readTextFile, secretModeFinding } from "../../core/plugin-api/index.js";
import { asStoredTarget } from "./stored-target.js";
import { VAULT_FILE } from "./vault.js";

export async function checkVaultFile(home: string, sentinels: readonly SentinelView[]): Promise<DoctorFinding[]> {
  const path = join(home, VAULT_FILE);
  const out: DoctorFinding[] = [...(await secretModeFinding(home, path))];
  const text = await readTextFile(path);
  let secrets: Record<string, { sentinelId?: unknown }> = {};
  if (text !== undefined) {
    const parsed = parseQuietly(text);
    if (
      !parsed ||
      typeof parsed !== "object" ||
      !parsed.secrets ||
      typeof parsed.secrets !== "object" ||
      Array.isArray(parsed.secrets)
    ) {
      out.push({
        severity: "error",
        file: VAULT_FILE,
        message:
          'the webhook secret vault is not valid JSON or not a vault file ({"version":1,"secrets":{…}}): no webhook delivery can be signed',
        fix: "restore it from a backup; failing that, remove it and give every webhook sentinel a new secret (svc sentinel rotate-secret <id>)",
      });
      return out;
    }
    secrets = parsed.secrets as typeof secrets;
  }
  out.push(...refFindings(VAULT_FILE, secrets, sentinels, "nothing to do: the daemon removes it at its next start"));
  return out;
}

/**
 * Every webhook sentinel's current secret is among `secrets` (an error for an active sentinel,
 * info for an expired one), and every stored secret is some sentinel's current or previous one
 * (info). Shared by the file vault's check and the team store's (team/team-vault-check.ts).
 */
export function refFindings(
  where: string,
  secrets: Readonly<Record<string, { sentinelId?: unknown }>>,
  sentinels: readonly SentinelView[],
  unreferencedFix: string,
): DoctorFinding[] {
  const out: DoctorFinding[] = [];
  const referenced = new Set<string>();
  for (const s of sentinels) {
    const stored = asStoredTarget(s.spec.target as Record<string, unknown>);
    if (!stored) continue;
    referenced.add(stored.secretRef);
    if (stored.prevSecretRef) referenced.add(stored.prevSecretRef);
    if (Object.hasOwn(secrets, stored.secretRef)) continue;
    const active = s.status === "active";
    out.push({
      severity: active ? "error" : "info",
      file: where,
      message: `the secret of webhook sentinel ${s.id} (${stored.secretRef}) is not in the vault: ${active ? "its deliveries cannot be signed and end dead (sentinel_removed)" : "it has expired, so nothing is sent"}`,
      fix: active
        ? `give it a new secret: svc sentinel rotate-secret ${s.id} (or remove the sentinel and create it again)`
        : `nothing to do; svc sentinel unwatch ${s.id} removes the expired sentinel`,
    });
  }
  for (const [ref, row] of Object.entries(secrets)) {
    if (referenced.has(ref)) continue;
    out.push({
      severity: "info",
      file: where,
      message: `secret ${ref} (of sentinel ${typeof row?.sentinelId === "string" ? row.sentinelId : "unknown"}) is referenced by no sentinel (left by an interrupted create, rotation or removal)`,
      fix: unreferencedFix,
    });
  }
  return out;
}

/** The parsed file, or null; the parser's message quotes the text, which holds secrets, so it is never shown. */
function parseQuietly(text: string): { secrets?: unknown } | null {
  try {
    return JSON.parse(text) as { secrets?: unknown } | null;
  } catch {
    return null;
  }
}
