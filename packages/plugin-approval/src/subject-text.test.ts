import type { ApprovalSubject } from '@aalis/core';
import { describe, expect, it } from 'vitest';
import { subjectLines } from './subject-text.js';

describe('subjectLines', () => {
  it.each<[string, ApprovalSubject, string[]]>([
    [
      'a command whose second line is hidden behind a comment in one-line form',
      { kind: 'host-exec', command: 'echo "done"  # not run: touch x\ntouch x', cwd: '/w', rule: 'tier' },
      ['run on the host, outside the sandbox, the command:', '  │ echo "done"  # not run: touch x', '  │ touch x', 'in the directory:', '  │ /w'],
    ],
    ['a long command, not cut', { kind: 'host-exec', command: `echo ${'a'.repeat(5000)}`, rule: 'boundary' }, ['run on the host, outside the sandbox, the command:', `  │ echo ${'a'.repeat(5000)}`]],
    ['its input, and an empty one', { kind: 'host-exec', command: 'sh', stdin: '', rule: 'tier' }, ['run on the host, outside the sandbox, the command:', '  │ sh', 'with this input:', '  │ (empty)']],
    ['a path with a newline in it', { kind: 'write-path', path: '/w/safe.txt\n/root/.bashrc', rule: 'boundary' }, ['write the path:', '  │ /w/safe.txt', '  │ /root/.bashrc']],
    ['a path to make', { kind: 'write-path', path: '/w/a', toMake: '/w/a/b/c', rule: 'tier' }, ['write the path:', '  │ /w/a', 'to make there:', '  │ /w/a/b/c']],
    ['the network', { kind: 'network', via: 'command', rule: 'tier' }, ['use the network (through a command)']],
    ['a tool', { kind: 'tool', tool: 'tool_manager', summary: 'tool_manager create x', rule: 'high-risk' }, ['run the tool:', '  │ tool_manager', 'with:', '  │ tool_manager create x']],
    ['a plan', { kind: 'plan', summary: '1. a\n2. b', rule: 'plan' }, ['approve the plan:', '  │ 1. a', '  │ 2. b']],
  ])('%s', (_name, subject, lines) => {
    expect(subjectLines(subject)).toEqual(lines);
  });
});
