/**
 * The public API for plugin authors: `import { defineProvider } from "svc/plugin-api"`.
 * Everything a plugin may use reaches it through its {@link PluginContext}.
 */
export type { SvcEvent, DaemonEvent, DaemonEventSink, DaemonEventSource, HeardDaemonEvent } from "./events.js";
export { toEventOccurrence, type EventOccurrence } from "./mcp-event.js";
export {
  decodeWebhookSecret,
  WEBHOOK_SECRET_PREFIX,
  WEBHOOK_SECRET_RULE,
  WEBHOOK_SECRET_MIN_BYTES,
  WEBHOOK_SECRET_MAX_BYTES,
} from "./webhook-secret.js";
export { defineEventType, parseEventArguments, eventArgumentError, type EventTypeDef } from "./event-type.js";
export type { RouteAuth, RouteDef, RouteRequest, RouteResponse, RouteRegistry, HttpMethod } from "./http.js";
export type { ToolDef, ToolRegistry, ToolCallContext } from "./tools.js";
export type { Egress, EgressResponse, EgressFailure } from "./egress.js";
export { EGRESS_MAX_BODY_BYTES } from "./egress.js";
export * from "./limits.js";
export { REDACTED, SECRET_ENV_NAME, type HeldSecrets, type HeldSecretSource } from "./redaction.js";
/** The curated ACP agent catalog (SPEC.md `acpAgents`): a host default that config entries shadow. */
export { ACP_CATALOG, AGENT_TRAITS, type AcpRecipe } from "../config/acp-catalog.js";
/** The SSRF gate's URL rule (what `ctx.service("egress")` applies first): a parseable `https:` URL, else SvcError `non_https`. */
export { parseHttpsUrl } from "../egress/gate.js";
export { hostOf } from "../runtime/logger.js";
export type {
  PluginContext,
  HostServices,
  SentinelView,
  SentinelIngress,
  IngestResult,
  CredentialStore,
  Clock,
  Random,
  Sleep,
  Logger,
} from "./context.js";
export {
  defineProvider,
  type ProviderPlugin,
  type ProviderInstance,
  type ProviderReadiness,
  type ProviderEventType,
  type MatchClauseSpec,
} from "./provider.js";
export {
  defineTarget,
  type TargetPlugin,
  type TargetInstance,
  type TargetAck,
  type TargetDelivery,
  type TargetCreateMeta,
  type TargetLedger,
  type TargetRefreshResult,
  type TargetResumeResult,
  type DeliveryCounts,
} from "./target.js";
export type { TeamSql, TeamDatabase, TeamJob, TeamJobs, Lease, Leadership, StoreTransfer } from "./team.js";
export type { DoctorFinding, DoctorSeverity, TargetCheckInput } from "./doctor.js";
/** Read-only helpers for a target's `check` (`svc doctor`): secret file modes, `.damaged-*` copies, torn tails. */
export { secretModeFinding, damagedCopyFindings, tornTailFinding, tornTailFindings } from "../storage/file-check.js";
export { defineAdapter, type AdapterPlugin, type AdapterInstance } from "./adapter.js";
export { defineRedactor, type RedactorPlugin, type RedactorContext, type RedactionSurface } from "./redactor.js";
export type {
  SessionStartSpec,
  SessionResumeSpec,
  SessionUpdateSink,
  SessionAdapterInstance,
  AdapterSession,
  TurnOutcome,
  SpawnAuth,
  SpawnOptionValue,
  SessionHost,
  PromptUrgency,
  PromptSender,
  PromptReceipt,
  ParkedDelivery,
  DeliveryRef,
} from "./sessions.js";
export { prependPath } from "./sessions.js";
export { SvcError, issuesToDetails, diskFullError, type SvcErrorCode } from "../errors.js";

export type AnyPlugin =
  | import("./provider.js").ProviderPlugin
  | import("./target.js").TargetPlugin
  | import("./adapter.js").AdapterPlugin
  | import("./redactor.js").RedactorPlugin;

/**
 * Durable storage helpers for plugins that keep files under `$SVC_HOME` (atomic, fsynced,
 * kill -9 safe, cross-process locked), so plugins never hand-roll them.
 */
export { writeFileDurable, fsyncDir, type AtomicWriteOptions } from "../storage/atomic-write.js";
export { writingFile, namingFile } from "../storage/file-errors.js";
export { readJsonFile, readTextFile, writeJsonFile, updateJsonFile } from "../storage/json-file.js";
export { withFileLock, type LockOptions } from "../storage/lock.js";
export { openDurableAppend, type DurableAppendFile } from "../storage/durable-append.js";
export { AppendJournal, type AppendJournalOptions } from "../storage/append-journal.js";
/** Free space: an optional write (a compaction) runs only when it leaves the daemon's own room free. */
export {
  roomFor,
  diskSpace,
  daemonRoom,
  type SpaceProbe,
  type DiskSpace,
  type RoomCheck,
} from "../storage/free-space.js";
export {
  checkJournalAtStart,
  lossRecordPath,
  lossSeqs,
  type JournalLoss,
  type JournalStartCheck,
} from "../storage/journal-loss.js";
export {
  checkedLine,
  checkedLinesBytes,
  readCheckedLines,
  textChecksum,
  keepDamagedCopy,
  type CheckedLines,
} from "../storage/checked-lines.js";
/**
 * Stopping a process a session started: SIGTERM, then SIGKILL after {@link STOP_GRACE_MS}
 * (`groupKiller(pid)` signals a `detached` child's whole process group).
 */
export { terminateAndWait, groupKiller, STOP_GRACE_MS } from "../sessions/terminate.js";
/** zod, the one the host validates with: use it for a target's `inputSchema` (no zod dependency of your own needed). */
export { z } from "zod";
