import { constants } from 'node:fs';
import { lstat, readdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { readFileNoFollow } from '@aalis/core';
import { z } from 'zod';
import { ownProgramOf, SPEC_FILE, type ToolSpec, ToolSpecSchema } from './tool-spec.js';

/** A tool folder whose spec loaded: everything a call needs. */
export interface LoadedSpec {
  /** The folder's real path. */
  readonly dir: string;
  /** The spec file's path. */
  readonly file: string;
  readonly spec: ToolSpec;
  /** The parameter schema the dispatcher validates calls with, made from the spec's JSON Schema. */
  readonly params: z.ZodType;
  /** The real path of the tool's own program, when `command` names one (`./name`). */
  readonly program: string | undefined;
}

/** Why one tool folder was left out: the file, the field (a dotted path) and what is wrong. */
export interface SpecProblem {
  readonly tool: string;
  readonly file: string;
  readonly field: string;
  readonly message: string;
}

/** The result of reading a tools directory: what loaded, and each folder left out with why. */
export interface LoadedSpecs {
  readonly tools: readonly LoadedSpec[];
  readonly problems: readonly SpecProblem[];
}

const MAX_SPEC_BYTES = 256 * 1024;

/**
 * Reads every tool folder in `toolsDir` (a real path): `<name>/tool.json`, validated. A folder
 * whose spec is bad, whose name is reserved, or whose own program is missing is left out and
 * reported with the file and the field; the others load. A missing directory holds no tools.
 * Nothing is followed through a symlink: a folder, spec or program that is one is left out.
 */
export async function loadToolSpecs(toolsDir: string, reserved: ReadonlySet<string>): Promise<LoadedSpecs> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(toolsDir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { tools: [], problems: [] };
    return { tools: [], problems: [{ tool: '*', file: toolsDir, field: '(directory)', message: `the tools directory cannot be read: ${(error as Error).message}` }] };
  }
  const tools: LoadedSpec[] = [];
  const problems: SpecProblem[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.name.startsWith('.')) continue; // the audit log, the trash of deleted tools
    const dir = join(toolsDir, entry.name);
    if (entry.isSymbolicLink()) {
      problems.push({ tool: entry.name, file: dir, field: '(folder)', message: 'a tool folder must be a real directory, not a symlink; it was left out' });
      continue;
    }
    if (!entry.isDirectory()) continue;
    const loaded = await loadOne(dir, entry.name, reserved);
    if ('problem' in loaded) problems.push(loaded.problem);
    else tools.push(loaded.spec);
  }
  return { tools, problems };
}

async function loadOne(dir: string, folder: string, reserved: ReadonlySet<string>): Promise<{ spec: LoadedSpec } | { problem: SpecProblem }> {
  const file = join(dir, SPEC_FILE);
  const problem = (field: string, message: string) => ({ problem: { tool: folder, file, field, message } });
  let text: string;
  try {
    text = (await readFileNoFollow(file, MAX_SPEC_BYTES)).toString('utf8');
  } catch (error) {
    const yaml = await lstat(join(dir, 'tool.yaml')).then(
      () => true,
      () => false,
    );
    if (yaml) return { problem: { tool: folder, file: join(dir, 'tool.yaml'), field: '(file)', message: 'YAML specs are not read here (no YAML parser among the dependencies); write the same fields as tool.json' } };
    return problem('(file)', `no readable ${SPEC_FILE}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return problem('(file)', `not JSON: ${(error as Error).message}`);
  }
  const parsed = ToolSpecSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join('.') || '(spec)';
    return problem(field, parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(spec)'}: ${i.message}`).join('; '));
  }
  const spec = parsed.data;
  if (spec.name !== folder) return problem('name', `the name '${spec.name}' differs from its folder '${folder}'; they must be the same`);
  if (reserved.has(spec.name)) return problem('name', `'${spec.name}' is reserved (a built-in tool or the tool manager); a spec cannot take its name`);
  let params: z.ZodType;
  try {
    params = z.fromJSONSchema(spec.parameters as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    return problem('parameters', `not a JSON Schema this daemon can validate with: ${(error as Error).message}`);
  }
  const own = ownProgramOf(spec);
  let program: string | undefined;
  if (own !== undefined) {
    const path = join(dir, own);
    const stat = await lstat(path).catch(() => undefined);
    if (stat === undefined) return problem('command.0', `the program ${path} does not exist; build the tool (tool_manager build) or put the program there`);
    if (!stat.isFile()) return problem('command.0', `the program ${path} is not a regular file (a symlink or a directory is not run)`);
    if ((stat.mode & (constants.S_IXUSR | constants.S_IXGRP | constants.S_IXOTH)) === 0) return problem('command.0', `the program ${path} is not executable`);
    program = path;
  }
  return { spec: { dir: await realpath(dir), file, spec, params, program } };
}
