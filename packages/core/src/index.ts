export { type ApprovalOutcome, APPROVAL_OUTCOMES, type ApprovalRequest, type ApprovalService, type ApprovalSubject, approval } from './approval.js';
export { type AuthorityConfig, AuthorityConfigSchema, type AuthorityService, authority, authorityPlugin, createAuthority, type Principal } from './authority.js';
export type { PluginContext } from './context.js';
export { type ChatMessage, ChatMessageSchema, type Conversation, fingerprintOf, MESSAGE_ROLES, type ModelContext, ModelContextSchema } from './conversation.js';
export {
  AalisError,
  type AalisErrorOptions,
  describeError,
  type ErrorEnvelope,
  ErrorEnvelopeSchema,
  type ErrorJson,
  ErrorJsonSchema,
  errorEnvelope,
  errorJsonOf,
  errorText,
  isAalisError,
  readErrorEnvelope,
} from './aalis-error.js';
export {
  HTTP_STATUS_BY_CODE,
  httpStatusOf,
  MAX_JSON_BODY,
  type ReadJsonBodyOptions,
  REFUSED_STATUS,
  REQUEST_BODY_ERROR_CODES,
  RequestBodyError,
  type RequestBodyErrorCode,
  readJsonBody,
  sendErrorAnswer,
  sendJson,
  validBody,
} from './http-answer.js';
export { jsonNestsDeeperThan, MAX_JSON_DEPTH } from './json-depth.js';
export { KERNEL_ERROR_CODES, KernelError, type KernelErrorCode } from './errors.js';
export { EventBus, type KernelEventName, type KernelEventPayload, type KernelEvents } from './events.js';
export { createKernel, Kernel, type KernelOptions, type PluginStatus, type StopReport } from './kernel.js';
export { type AnyService, type Disposer, definePlugin, type Plugin, type PluginSpec } from './plugin.js';
export { defineService, sameService, type ServiceDescriptor, type ServiceOf } from './service.js';
export { HAS_PROC_FD, type SafePath } from './dir-anchor.js';
export { atFd, type DirId, DirMovedError, idOf, MountInTreeError, mountIdOf, namesIn, openDirNoFollow, type RemoveSeam, removeTreeAt, upTo } from './fd-tree.js';
export {
  cleanStaleTemps,
  copyFileAtomic,
  isTempName,
  listDirNoFollow,
  makeDirs,
  moveAside,
  openForAppend,
  type OpenedSource,
  openForRead,
  readFileNoFollow,
  type RenameOptions,
  removeEmptyDir,
  removeFile,
  renameNoFollow,
  TEMP_SUFFIX,
  type TempRecorder,
  type WriteOptions,
  writeFileAtomic,
} from './safe-file.js';
export { makeDirsSync, moveAsideSync, removeFileSync, removeTreeSync, renameNoFollowSync } from './safe-file-sync.js';
export { isSafeFileError, SAFE_FILE_ERROR_CODES, SafeFileError, type SafeFileErrorCode } from './safe-file-error.js';
export { openWalkedFile, type WalkEntry, type WalkKind, type WalkStep, walkTreeNoFollow } from './tree-walk.js';
export { gitConfigNotInert, INERT_GIT_CONFIG_KEYS, INERT_GIT_CONFIG_MAX_BYTES } from './inert-git-config.js';
export { type NewGitDirEntry, NewGitDirJudge, type NewGitDirVerdict } from './new-git-dir.js';
export { expandHome, type GitConfigEntry, GitConfigUnreadableError, gitConfigEntries, gitConfigProgramPaths, gitConfigProgramWords, gitConfigValues, parseGitConfig } from './git-config.js';
export { GIT_DIR_MARK_NAMES, takenForGitDir } from './git-dir-shape.js';
export { ENVRC_MAX_BYTES, type EnvrcReferences, envrcReferences } from './envrc-references.js';
export { LANDING_FOLDER_LINKS_MAX, type LandingLink, landingLinkChains } from './landing-link-chains.js';
export { type LinkChain, linkChainOf, resolutionOf } from './link-chain.js';
export { KERNEL_FILE_SYSTEMS, kernelFileSystemOf, kernelFileSystemOfFd } from './kernel-file-system.js';
export { SESSION_ERROR_CODES, SessionError, type SessionErrorCode } from './session-error.js';
export { type ArchivedMessages, CONVERSATION_MAX_BYTES, RESIDENT_CONVERSATIONS, Sessions, type SettingsChangedEvent, sessions } from './sessions.js';
export { sessionsPlugin } from './sessions-plugin.js';
export {
  ACCESS_TIERS,
  type AccessTier,
  AccessTierSchema,
  APPROVERS,
  type Approver,
  ApproverSchema,
  AXIS_ALIASES,
  BOUNDARY_POLICIES,
  type BoundaryPolicy,
  DEFAULT_SETTINGS,
  DEPLOYMENTS,
  type Deployment,
  execPlaceOf,
  RUN_MODES,
  type RunMode,
  resolveSettings,
  type SessionSettings,
  SessionSettingsSchema,
  type SettingsChange,
  SettingsChangeSchema,
  type SettingsResolution,
} from './settings.js';
export { DurableStore, type LogRead, type StoreOptions } from './store.js';
export {
  type AnyTool,
  type DispatcherOptions,
  defineTool,
  RISK_LEVELS,
  type RiskLevel,
  TOOL_ERROR_KINDS,
  type Tool,
  type ToolCallContext,
  type ToolCallExtender,
  type ToolCallExtensions,
  type ToolCallRequest,
  ToolDispatcher,
  ToolError,
  type ToolErrorKind,
  type ToolOutcome,
  tools,
} from './tools.js';
export { processAlive } from './process-alive.js';
export { makeProcessDir, type RemoveDir, sweepProcessDirs } from './process-dirs.js';
export { type RegularRead, readRegularSync } from './read-regular-sync.js';
export { TempJournal } from './temp-journal.js';
export { toolsPlugin } from './tools-plugin.js';
export { type AuthoredMessage, type Identity, IdentitySchema, ORIGIN_CATEGORIES, type OriginCategory, type OriginTurn, OriginTurnSchema, originatingTurn, personScopeOf, settingsScopeOf, turnWithAuthors, UNAUTHENTICATED_AUTHOR } from './turn.js';
export { KEYED_LIST_SCRIPT } from './keyed-list.js';
export { PAGE_CODE_KINDS, PAGE_CODE_LABEL, PAGE_CODE_SCRIPT, type PageCodeKind } from './page-code.js';
export { escapeInvisible, idProblem, isWellFormedText, MAX_ID_BYTES, shownBytes, shownText, UNSHOWN_CHARACTERS, utf8NameOf } from './well-formed.js';
export { canonicalHostPath, decodeHostPath, decodeHostText, decodeName, encodePath, hasRawBytes, hostPathArg, printablePath } from './host-names.js';
export { escapePattern } from './pattern-escape.js';
export { type LandingExtrasInput, type LandingRule, envrcRules, landingExtraRules, landingLinkRules, nestedRepoRules } from './landing-extras.js';
