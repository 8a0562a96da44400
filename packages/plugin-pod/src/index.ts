export { type AgentResult, type AgentRun, runAgent } from './agent.js';
export { AGENT_TOOLS, type AgentTool, type AgentToolContext, type AgentToolOutcome, modelToolsOf } from './agent-tools.js';
export {
  CLEANUP_POLICIES,
  POD_TOOL_NAMES,
  type PodConfig,
  type PodConfigInput,
  PodConfigSchema,
  PodModelSchema,
  type PodToolName,
  RETURN_KINDS,
  type ReturnKind,
  SubdirSchema,
} from './config.js';
export { finishedTurns, type ReadContext } from './conversation-context.js';
export { POD_ERROR_CODES, PodError, type PodErrorCode } from './errors.js';
export {
  CLASH_CHOICES,
  type ClashChoice,
  EXPORT_MODES,
  type ExportGrant,
  type ExportLogRecord,
  type ExportPlan,
  type ExportRecord,
  type ExportRequest,
  ExportRequestSchema,
  type ExportStart,
  type PlannedItem,
  type UndoRecord,
} from './export-types.js';
export { Exporter, type ExporterDeps } from './exporter.js';
export { checkRoot, makeTaskDirs, type RootContext, within } from './sandbox-root.js';
export { podPlugin } from './plugin.js';
export { podEnvOf, podPolicyOf } from './policy.js';
export { returnMessage, shorten, statusOf, summaryOf } from './return-message.js';
export { PodService, type PodServiceDeps, type PodSettingsView, pod, StartTaskSchema } from './service.js';
export { type CleanReport, type CleanupDeps, cleanTasks, expireTasks, removeTaskDir } from './task-cleanup.js';
export { listTaskFiles, readTaskFile, type TaskFileRead } from './task-files.js';
export { TaskRunner, type TaskRunnerDeps } from './task-runner.js';
export { FINAL_STATES, type LogEntry, LogEntrySchema, type NewLogEntry, TASK_STATES, type TaskDirs, type TaskFile, type TaskRecord, TaskRecordSchema, type TaskState } from './task.js';
export { TaskLog } from './task-log.js';
export { type PodCommandService, type PodIO, podCommand } from './cli.js';
export { type PodCaller, type PodRouteHandler, podRoutes } from './http.js';
export { PANEL_HTML } from './panel.js';
