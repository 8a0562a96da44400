import type { ApprovalSubject } from '@aalis/core';

/**
 * What an ask asks, whole and line by line, for a person to read before answering at a terminal:
 * the summary is one line cut at 400 characters, and a command's newline read as a space there
 * showed `echo "…"  # not run: touch x` where a second line ran `touch x` on approval (found by an
 * attack). Each line of a value (a command, its input, a path) is its own line here, marked `│`,
 * so a newline in it cannot pass for a space; nothing is cut. The caller still escapes what a
 * terminal would obey (controls, bidirectional and invisible characters).
 */
export function subjectLines(subject: ApprovalSubject): string[] {
  switch (subject.kind) {
    case 'write-path':
      return ['write the path:', ...valueLines(subject.path), ...(subject.toMake ? ['to make there:', ...valueLines(subject.toMake)] : [])];
    case 'host-exec':
      return [
        'run on the host, outside the sandbox, the command:',
        ...valueLines(subject.command),
        ...(subject.cwd !== undefined ? ['in the directory:', ...valueLines(subject.cwd)] : []),
        ...(subject.stdin !== undefined ? ['with this input:', ...valueLines(subject.stdin)] : []),
      ];
    case 'network':
      return [`use the network (through a ${subject.via})`];
    case 'workflow':
      return ['run the workflow:', ...valueLines(subject.workflow)];
    case 'tool':
      return ['run the tool:', ...valueLines(subject.tool), ...(subject.summary ? ['with:', ...valueLines(subject.summary)] : [])];
    case 'plan':
      return ['approve the plan:', ...valueLines(subject.summary)];
  }
}

/** A value's lines, each marked; an empty value is said to be empty. */
function valueLines(value: string): string[] {
  if (value === '') return ['  │ (empty)'];
  return value.split('\n').map((line) => `  │ ${line}`);
}
