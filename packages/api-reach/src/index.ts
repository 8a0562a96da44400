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
