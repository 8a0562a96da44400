import { parseRunRequest, SandboxRequestError, type SandboxRunRequest, SandboxRunRequestSchema } from '@aalis/api-reach';

/** The contract's run-request schema, under the name this package has exported it by. */
export const RunRequestSchema = SandboxRunRequestSchema;

/** The contract's invalid-request error, under the name this package has exported it by. */
export const RunRequestError = SandboxRequestError;

/**
 * The request checked by the contract every backend shares; throws a {@link SandboxRequestError}
 * (a `SandboxUnavailableError`) naming the field that is wrong, before anything touches the host.
 */
export function checkRunRequest(request: unknown): SandboxRunRequest {
  return parseRunRequest('linux', request);
}
