// The loader on real folders: a bad spec is left out with its file and field, the others load.
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadToolSpecs } from './load-specs.js';
import { addFixture, tempDir } from './spec-tools.testing.js';

function tool(dir: string, name: string, spec: unknown): string {
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(join(dir, name, 'tool.json'), typeof spec === 'string' ? spec : JSON.stringify(spec));
  return join(dir, name, 'tool.json');
}

const good = { description: 'd', risk: 'low', sandbox: { profile: 'stdio' }, command: ['true'] };

describe('loadToolSpecs', () => {
  it('loads good folders and leaves out each bad one, naming its file and field', async () => {
    const dir = tempDir();
    for (const name of ['echo_env', 'bad_field', 'not_json']) addFixture(dir, name);
    const wrongName = tool(dir, 'wrong_name', { ...good, name: 'other' });
    const reserved = tool(dir, 'read_file', { ...good, name: 'read_file' });
    const badSchema = tool(dir, 'bad_schema', { ...good, name: 'bad_schema', parameters: { type: 'object', properties: { a: { type: 'frob' } } } });
    const noProgram = tool(dir, 'no_program', { ...good, name: 'no_program', command: ['./prog'] });
    const dots = tool(dir, 'dots', { ...good, name: 'dots', command: ['./../../bin/sh'] });
    mkdirSync(join(dir, 'yaml_only'));
    writeFileSync(join(dir, 'yaml_only', 'tool.yaml'), 'name: yaml_only\n');
    const { tools, problems } = await loadToolSpecs(dir, new Set(['read_file', 'tool_manager']));
    expect(tools.map((t) => t.spec.name)).toEqual(['echo_env']);
    expect(tools[0]?.spec.risk).toBe('low');
    const byTool = Object.fromEntries(problems.map((p) => [p.tool, p]));
    expect(byTool.bad_field).toMatchObject({ file: join(dir, 'bad_field', 'tool.json'), field: 'sandbox.read_only', message: expect.stringContaining('read_only cannot be turned off') });
    expect(byTool.not_json).toMatchObject({ field: '(file)', message: expect.stringContaining('not JSON') });
    expect(byTool.wrong_name).toMatchObject({ file: wrongName, field: 'name', message: expect.stringContaining('differs from its folder') });
    expect(byTool.read_file).toMatchObject({ file: reserved, field: 'name', message: expect.stringContaining('reserved') });
    expect(byTool.bad_schema).toMatchObject({ file: badSchema, field: 'parameters', message: expect.stringContaining('frob') });
    expect(byTool.no_program).toMatchObject({ file: noProgram, field: 'command.0', message: expect.stringContaining('does not exist') });
    expect(byTool.dots).toMatchObject({ file: dots, field: 'command.0' });
    expect(byTool.yaml_only).toMatchObject({ file: join(dir, 'yaml_only', 'tool.yaml'), field: '(file)', message: expect.stringContaining('tool.json') });
    expect(problems).toHaveLength(8);
  });

  it('follows no symlink: a symlinked folder, spec or program is left out', async () => {
    const dir = tempDir();
    const elsewhere = tempDir();
    tool(elsewhere, 'linked', { ...good, name: 'linked' });
    symlinkSync(join(elsewhere, 'linked'), join(dir, 'linked'));
    mkdirSync(join(dir, 'spec_link'));
    symlinkSync(join(elsewhere, 'linked', 'tool.json'), join(dir, 'spec_link', 'tool.json'));
    tool(dir, 'prog_link', { ...good, name: 'prog_link', command: ['./prog'] });
    symlinkSync('/bin/sh', join(dir, 'prog_link', 'prog'));
    tool(dir, 'not_exec', { ...good, name: 'not_exec', command: ['./prog'] });
    writeFileSync(join(dir, 'not_exec', 'prog'), '#!/bin/sh\n');
    chmodSync(join(dir, 'not_exec', 'prog'), 0o644);
    const { tools, problems } = await loadToolSpecs(dir, new Set());
    expect(tools).toEqual([]);
    expect(Object.fromEntries(problems.map((p) => [p.tool, p.field]))).toEqual({ linked: '(folder)', spec_link: '(file)', prog_link: 'command.0', not_exec: 'command.0' });
  });

  it('a missing tools directory holds no tools', async () => {
    expect(await loadToolSpecs(join(tempDir(), 'none'), new Set())).toEqual({ tools: [], problems: [] });
  });
});
