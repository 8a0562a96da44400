export { browserProfileDirs } from './browser-profiles.js';
export { REACH_INPUT_PROBLEMS, ReachInputError, type ReachInputProblem } from './errors.js';
export { INSTALL_FORMS, type HostPaths, type InstallForm } from './host-paths.js';
export type { ProtectedLists } from './lists.js';
export { type CompiledRules, compileRule, compileRules, matchesRule, type PreparedPath, preparePath } from './match.js';
export { escapePattern, foldPath, foldsCase, slashPath } from './path.js';
export { checkPattern, validatePattern } from './pattern.js';
export {
  CREDENTIAL_FILES,
  ENV_FILES,
  GIT_LANDINGS,
  PROJECT_LANDINGS,
  type ProtectedListsInput,
  protectedLists,
  SHELL_STARTUP_FILES,
} from './protected-lists.js';
export { withRealRoots } from './real-roots.js';
export type { PathMatcher, PathRule } from './rule.js';
export type { SandboxGrants, SandboxPolicy } from './sandbox-policy.js';
export {
  SANDBOX_BACKENDS,
  type SandboxBackend,
  type SandboxCheck,
  type SandboxProbe,
  type SandboxRunRequest,
  type SandboxRunResult,
  type SandboxService,
  SandboxUnavailableError,
  sandbox,
} from './sandbox.js';
