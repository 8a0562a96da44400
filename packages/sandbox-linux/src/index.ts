export { NAMESPACE_FLAGS, NETWORK_OFF_FLAGS, SECCOMP_FD } from './bwrap-flags.js';
export { FILTER_TABLE, type HostAddresses, hostAddresses, loopbackFilterRules, SLIRP_NETWORK } from './loopback-filter.js';
export { groupHidden, MAX_HIDDEN_MOUNTS } from './hidden-groups.js';
export { linuxRefusal } from './refusal-test.js';
export { PolicyEvaluator, PATH_STATES, type PathState } from './policy-evaluator.js';
export { NEW_ENTRY_NAMES, placeholderBases, placeholderCandidates } from './placeholders.js';
export { ADVISORY_CHECKS, CHECK_NAMES, MIN_BWRAP, probeHost } from './probe.js';
export { hostFingerprint, PROBE_CACHE_TTL_MS, type ProbeCacheOptions } from './probe-cache.js';
export { RunRequestError, RunRequestSchema } from './request.js';
export { sweepStaleRunDirs } from './run-dir.js';
export {
  type EntryKind,
  type FoundEntry,
  findPatternMatches,
  HOME_DEPTH,
  type HostFacts,
  type PatternMatches,
  isToolchainCache,
  KEEP_READABLE,
  MAX_MOUNT_PATH,
  keepReadablePaths,
  ScanLimitError,
  type ScanOptions,
  scanHost,
  scanRoots,
  type ScanWalk,
  scanWalks,
  TOOLCHAIN_CACHE_SUFFIXES,
} from './scan.js';
export { type HostSocketFacts, hostSocketFacts, hostSockets, listedSockets, SOCKET_HOMES, type SocketHome, socketHomes } from './host-sockets.js';
export { KERNEL_SURFACE, type KernelPath, kernelSurface } from './kernel-surface.js';
export { CPU_SHARE_SETTINGS, type CpuShareSetting, SANDBOX_CPU_SHARES } from './cpu-share.js';
export { DEFAULT_PID_LIMIT, PidLimitError, type PidLimitMechanism } from './pid-limit.js';
export { buildSeccompFilter, SECCOMP_ARCHES, SeccompBuildError, type SeccompArch } from './seccomp.js';
export { HOST_MODELS, type HostModel, OVERLAY_OPTIONS, type OverlayProbe, probeOverlay } from './overlay-mount.js';
export { HOST_MODEL_CHECK } from './overlay-run.js';
export { chooseRootRange, HOST_UID_CHECK, type IdFiles, type IdRange, ROOT_MAP_COUNT, ROOT_MAP_FIRST, ROOT_UID_MAPS, type RootUidMap } from './root-map.js';
export { type CommitReport, commitUpper } from './upper-commit.js';
export { createLinuxSandbox, DEFAULT_LANDING_SWEEP_MS, defaultUndoneDir, DEFAULT_MAX_OUTPUT, LAUNCHER_SETTINGS, type LauncherSetting, LinuxSandbox, type LinuxSandboxOptions, PREPARE_SETTINGS, type PrepareSetting } from './service.js';
export type { HostWalks } from './host-thread.js';
export { type PlannedMount, type Placeholder, type TmpPlan, type Translation, type TranslateOptions, translatePolicy, UntranslatableError } from './translate.js';
