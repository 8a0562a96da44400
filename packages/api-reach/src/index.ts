export { BoundedOutput, type OutputSource } from './bounded-output.js';
export { browserProfileDirs } from './browser-profiles.js';
export { isReachCredential, REACH_CREDENTIAL, type ReachCredential, type ReachVerdict } from './credential.js';
export { REACH_INPUT_PROBLEMS, ReachInputError, type ReachInputProblem } from './errors.js';
export { type HostPaths, INSTALL_FORMS, type InstallForm } from './host-paths.js';
export { type ExecCommand, judgeReach, type ReachAskReason, type ReachDecision, type ReachRequest } from './judge.js';
export type { ProtectedLists } from './lists.js';
export { type CompiledRules, compileRule, compileRules, matchesRule, type PreparedPath, preparePath } from './match.js';
export { namedPathsUnder } from './named-paths-under.js';
export { escapePattern, foldPath, foldsCase, pathIsUnder, slashPath } from './path.js';
export { checkPattern, topLevelAlternatives, validatePattern } from './pattern.js';
export { type PatternToken, patternTokens } from './pattern-tokens.js';
export { type ExtraLanding, GIT_LANDINGS, type LandingRulesInput, landingRules, PROJECT_LANDINGS, rulesOfEntry } from './landing-rules.js';
export {
  BARE_REPO_HEAD_PATTERN,
  LANDING_GROUPS,
  LANDING_TABLE,
  type LandingEntry,
  type LandingGroup,
  type LandingId,
  type LandingPlace,
  landingNames,
  SHELL_STARTUP_FILES,
} from './landing-table.js';
export { nodeModulesException, patternBody } from './node-modules-exception.js';
export { isNeverWritten, NEVER_WRITTEN, neverWrittenMessage } from './never-written.js';
export { CREDENTIAL_FILES, ENV_FILES, type ProtectedListsInput, protectedLists } from './protected-lists.js';
export { XDG_BASES, XDG_VARIABLES, type XdgBaseDirs, type XdgKind, xdgAliasOf, xdgBaseDirsOf, xdgPatternAliasOf } from './xdg-dirs.js';
export { aalisStateDir } from './state-dir.js';
export { systemSecretPaths } from './system-secrets.js';
export {
  type CompiledReach,
  compiledReach,
  gitDirLandings,
  type LocalReach,
  type Reach,
  type ReachInput,
  resolveReach,
} from './reach.js';
export { MOVED_ASIDE_REASONS, type MovedAside, type MovedAsideReason, MovedAsideSchema, movedAsideSummary } from './moved-aside.js';
export { withRealRoots } from './real-roots.js';
export {
  CANDIDATE_ROLES,
  type CandidateRole,
  inKernelTree,
  KERNEL_TREES,
  REFUSAL_ERRNOS,
  type RefusalErrno,
  type RefusalTest,
  type RefusedWriteCandidate,
  type RefusedWrites,
  refusedWriteCandidates,
  refusedWritesIn,
} from './refused-writes.js';
export type { PathMatcher, PathRule } from './rule.js';
export { parseRunRequest, parseSandboxCommand, SandboxRequestError, sandboxInputProblem } from './parse-run-request.js';
export {
  MAX_TIMEOUT_MS,
  type SandboxCommand,
  SandboxCommandSchema,
  type SandboxRunRequest,
  SandboxRunRequestSchema,
} from './run-request.js';
export { feedStdin, type StdinFeed, type StdinSink } from './feed-stdin.js';
export { isLiveStdin, type SandboxStdin } from './sandbox-stdin.js';
export { DEFAULT_MAX_PENDING_STDIN, StdinStream, type StdinWrite } from './stdin-stream.js';
export { PathRuleSchema, RealPathSchema, type SandboxGrants, type SandboxPolicy, SandboxPolicySchema } from './sandbox-policy.js';
export { sandboxPolicyAllows, sandboxPolicyOf } from './sandbox-policy-of.js';
export {
  PLAN_RUN_DIR,
  type PlanFile,
  PlanFileSchema,
  type PlanMount,
  PlanMountSchema,
  type PlanStep,
  PlanStepSchema,
  type SandboxPlan,
  SandboxPlanSchema,
} from './sandbox-plan.js';
export {
  type CommitConflictEntry,
  type KeptCommit,
  type KeptWrites,
  SANDBOX_BACKENDS,
  SANDBOX_ERROR_CODES,
  type SandboxBackend,
  type SandboxCheck,
  type SandboxErrorCode,
  type SandboxProbe,
  type SandboxRunResult,
  type SandboxService,
  SandboxUnavailableError,
  sandbox,
} from './sandbox.js';
export { sandboxPlugin } from './sandbox-plugin.js';
export {
  checkEnvPattern,
  envNameMatches,
  filterSecretEnv,
  SECRET_ENV_RULES,
  type SecretEnvConfig,
  type SecretEnvDecision,
  type SecretEnvResult,
  type SecretEnvRule,
  secretEnvRuleOf,
} from './secret-env.js';
export { type ReachService, reach } from './service.js';
export {
  ACCESS_TIERS,
  type AccessTier,
  BOUNDARY_POLICIES,
  type BoundaryPolicy,
  execOfTier,
  REACH_PRINCIPALS,
  type ReachPrincipal,
} from './tier.js';
export { linkedStoreDirs, sandboxStoreEnv, toolchainCacheDirs, userCacheDirs } from './toolchain-caches.js';
export {
  CLONE_NEWUSER,
  CREATING_OPEN_FLAGS,
  DENIED_IOCTLS,
  DENIED_SOCKETS,
  DENIED_SYSCALLS,
  FALLBACK_SYSCALLS,
  MODE_SYSCALLS,
  SET_ID_BITS,
} from './syscall-policy.js';
export { type PatternLiteral, patternLiteral } from './pattern-literal.js';
export { patternShadowedBy } from './pattern-shadowed-by.js';
