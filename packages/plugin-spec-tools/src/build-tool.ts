import { join } from 'node:path';
import type { SandboxPolicy } from '@aalis/api-reach';
import { removeFile } from '@aalis/core';
import { BUILDER_TIMEOUT_MS, type DockerSandbox } from '@aalis/sandbox-docker';
import { SpecToolError } from './spec-tool-error.js';
import { ownProgramOf, SPEC_FILE, type ToolSpec } from './tool-spec.js';

/** What a successful build printed, for the tool manager's result. */
export interface BuildReport {
  readonly ok: true;
  readonly program: string | undefined;
  readonly stderrTail: string;
}

function tailOf(text: string): string {
  return text.trim().split('\n').slice(-8).join('\n');
}

/**
 * Builds a tool in the builder profile (002): its `build.command` in its folder, offline, as the
 * uid:gid owning the folder, under a hard timeout, writing only that folder (its spec file stays
 * read-only: a build cannot rewrite its own risk). A failed build removes the tool's program, so
 * a reload cannot find a stale one and call it "successfully".
 */
export async function buildTool(box: DockerSandbox, dir: string, spec: ToolSpec, signal?: AbortSignal): Promise<BuildReport> {
  if (spec.build === undefined) throw new SpecToolError('bad-spec', `tool '${spec.name}' has no build.command to build with`, 'add build: { command: [...] } to its spec');
  const own = ownProgramOf(spec);
  const program = own === undefined ? undefined : join(dir, own);
  const policy: SandboxPolicy = {
    readDeny: [],
    readAllowWithin: [],
    write: [dir],
    writeDeny: [],
    writeExceptions: [],
    controlDeny: [{ path: join(dir, SPEC_FILE) }],
    network: 'off',
    localPorts: [],
    unixSockets: [],
  };
  const failed = async (why: string): Promise<never> => {
    if (program !== undefined) await removeFile(program);
    throw new SpecToolError(
      'build-failed',
      `the build of tool '${spec.name}' failed: ${why}${program !== undefined ? `; its program ${program} was removed, so no stale one can run` : ''}`,
      'fix the sources or the build command and build again',
    );
  };
  let result: Awaited<ReturnType<DockerSandbox['run']>>;
  try {
    result = await box.run({
      argv: spec.build.command as [string, ...string[]],
      cwd: dir,
      env: {},
      timeoutMs: BUILDER_TIMEOUT_MS,
      maxOutputBytes: 256 * 1024,
      policy,
      sandboxSpec: { profile: 'builder' },
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    return failed(`the builder container could not start: ${(error as Error).message}`);
  }
  if (result.timedOut) return failed(`it ran past the builder's ${BUILDER_TIMEOUT_MS / 1000} s limit and was killed`);
  if (result.exitCode !== 0) return failed(`it exited with ${result.exitCode ?? result.signal}:\n${tailOf(result.stderr)}`);
  if (result.writeDenied) return failed(`it tried to write outside its folder or its spec (${result.deniedWrites.join(', ')}), which was undone`);
  return { ok: true, program, stderrTail: tailOf(result.stderr) };
}
