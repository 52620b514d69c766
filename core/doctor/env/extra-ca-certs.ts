/**
 * NODE_EXTRA_CA_CERTS: Node reads it once at start and, when the file is missing or unreadable,
 * only warns and goes on without it, so webhooks to a receiver signed by that CA then fail with an
 * untrusted certificate. A file that holds no PEM certificate is told too.
 */
import { readFile } from "node:fs/promises";
import type { DoctorFinding } from "../../plugin-api/doctor.js";
import { envFinding } from "./finding.js";

export async function checkExtraCaCerts(env: NodeJS.ProcessEnv): Promise<DoctorFinding[]> {
  const path = env.NODE_EXTRA_CA_CERTS;
  if (!path) return [];
  const fix = `point NODE_EXTRA_CA_CERTS at a readable PEM file of CA certificates, in the daemon's environment (or unset it)`;
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "unreadable";
    return [
      envFinding(
        "NODE_EXTRA_CA_CERTS",
        "error",
        `NODE_EXTRA_CA_CERTS names ${JSON.stringify(path)}, which cannot be read (${code}): Node ignores it, so receivers signed by those CAs are refused as untrusted`,
        fix,
      ),
    ];
  }
  if (!text.includes("-----BEGIN CERTIFICATE-----"))
    return [
      envFinding(
        "NODE_EXTRA_CA_CERTS",
        "error",
        `NODE_EXTRA_CA_CERTS names ${JSON.stringify(path)}, which holds no PEM certificate (-----BEGIN CERTIFICATE-----): Node adds nothing from it`,
        fix,
      ),
    ];
  return [];
}
