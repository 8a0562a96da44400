export { BASE_ENV_ALLOW, CONTAINER_PATH, containerEnv, EnvAllowEntrySchema } from './container-env.js';
export { type CliResult, DOCKER_CLIENT_ENV, DockerCli, type DockerClientOptions, engineUnreachable } from './docker-cli.js';
export { type AttachOutcome, type AttachRequest, attachClient } from './attach-client.js';
export { type DockerRunRequest, type DockerRunResult, DockerSandbox, type DockerSandboxOptions, type EngineLoss, type ProfileImages, type SessionOpenRequest } from './docker-sandbox.js';
export { instanceNameOf } from './instance-name.js';
export { currentOwner, type OwnerIdentity, type OwnerState, ownerLabels, ownerStateOf } from './owner.js';
export { SessionContainer, type SessionExecRequest, type SessionSweep } from './session-container.js';
export { dockerRefusal } from './refusal-test.js';
export { LABELS } from './labels.js';
export { type ContainerMount, type DeniedWrite, deniedWritesAfter, ENGINE_PATHS, type MountMode, type MountPlan, type MountPlanInput, NEVER_MOUNT_TARGETS, planMounts, type WritesAfter } from './mount-plan.js';
export { MountPolicyError } from './mount-policy-error.js';
export {
  BUILDER_TIMEOUT_MS,
  type ContainerIdentity,
  type ContainerProfile,
  effectiveRiskLevel,
  PROFILE_PRESETS,
  RESTRICTED_UID,
  type ResolvedProfile,
  resolveProfile,
  SANDBOX_PROFILES,
  type SandboxProfileName,
  type ToolSandboxSpec,
  ToolSandboxSpecSchema,
} from './profile.js';
export { isWithin, rulesCover } from './rule-match.js';
export { DEADLINE_PROGRAM, dockerRunArgs, type RunArgsInput, withDeadline } from './run-args.js';
export { DockerDeployment, type DockerDeploymentOptions } from './docker-deployment.js';
export { DeploymentSandbox, type DeploymentSpaces } from './deployment-sandbox.js';
export type { UserSpace } from './user-space.js';
export { DEPLOYMENT_MODES, type DeploymentMode, deploymentModeFromEnv } from './deployment-mode.js';
export { validateRequest } from './validate-request.js';
export {
  encodeToolEnvelope,
  TOOL_RUN_FAILURE_KINDS,
  type ToolCallInfo,
  type ToolEnvelope,
  ToolResultSchema,
  type ToolRunFailureKind,
  type ToolRunOutcome,
  toolRunOutcome,
} from './tool-envelope.js';
export { PREPARE_SCRIPT_HINT } from './prepare-script.js';
export { probeEngine } from './probe-engine.js';
