/**
 * Escape attempts, one a line. `run` is a shell command with `{ws}` (the workspace, writable),
 * `{home}` (a fake HOME), `{root}` (the scene), `{control}` (the data dir's control plane),
 * `{port}` (a port the "daemon" listens on, in localPorts) and `{ppid}` (the daemon's pid) filled
 * in. Every attempt must leave the scene exactly as it was (intermediates named `{ws}/x-*` are
 * allowed and removed), print no secret, and create none of `outside`.
 */
export interface EscapeAttempt {
  readonly id: string;
  readonly run: string;
  readonly network?: 'on';
  readonly outside?: readonly string[];
}

// biome-ignore format: one attempt a line
export const ESCAPES: readonly EscapeAttempt[] = [
  { id: 'symlink from the workspace to a landing outside', run: 'ln -s {home}/.bashrc {ws}/x-link && echo pwned >> {ws}/x-link' },
  { id: 'symlink to the control plane directory', run: 'ln -s {control} {ws}/x-ctl && echo pwned > {ws}/x-ctl/state.json' },
  { id: 'symlink to a new file outside the workspace', run: 'ln -s {root}/escaped {ws}/x-dangling && echo pwned > {ws}/x-dangling' },
  { id: '.. out of the workspace onto a landing', run: 'echo pwned > {ws}/src/../../home/.bashrc' },
  { id: '.. out of the workspace to a new file', run: 'echo pwned > {ws}/../escaped.txt' },
  { id: 'hardlink to a protected file in the workspace', run: 'ln {ws}/.git/config {ws}/x-hard && echo pwned >> {ws}/x-hard' },
  { id: 'hardlink to a landing outside the workspace', run: 'ln {home}/.bashrc {ws}/x-hard2 && echo pwned >> {ws}/x-hard2' },
  { id: 'rename a prepared tree onto .git/hooks', run: 'mkdir -p {ws}/x-hooks && printf "#!/bin/sh\\necho pwned\\n" > {ws}/x-hooks/pre-commit && chmod +x {ws}/x-hooks/pre-commit; rm -rf {ws}/.git/hooks; mv -T {ws}/x-hooks {ws}/.git/hooks' },
  { id: 'rename a prepared tree onto .vscode', run: 'mkdir -p {ws}/x-vs && echo "{}" > {ws}/x-vs/tasks.json && mv -T {ws}/x-vs {ws}/.vscode' },
  { id: 'rename .git away and replace it', run: 'mv {ws}/.git {ws}/x-git && mkdir -p {ws}/.git/hooks' },
  { id: 'git config core.hooksPath', run: 'git -C {ws} config core.hooksPath {ws}/x-hooks' },
  { id: 'git config --global core.hooksPath', run: 'HOME={home} git config --global core.hooksPath {ws}/x-hooks' },
  { id: 'write a git hook directly', run: 'echo pwned > {ws}/.git/hooks/pre-commit; chmod +x {ws}/.git/hooks/pre-commit' },
  { id: 'create .envrc, .env.local and .vscode/tasks.json', run: 'echo pwned > {ws}/.envrc; echo pwned > {ws}/.env.local; mkdir -p {ws}/.vscode; echo pwned > {ws}/.vscode/tasks.json' },
  { id: 'create AGENTS.md and .mcp.json', run: 'echo pwned > {ws}/AGENTS.md; echo pwned > {ws}/.mcp.json' },
  { id: 'remove or replace the .env file', run: 'rm -f {ws}/.env; mv {ws}/.env {ws}/x-env; echo pwned > {ws}/.env' },
  { id: 'write ~/.bashrc', run: 'echo pwned >> {home}/.bashrc' },
  { id: 'create ~/.profile', run: 'echo pwned > {home}/.profile' },
  { id: 'read ~/.ssh/id_*', run: 'cat {home}/.ssh/id_*; ls -a {home}/.ssh' },
  { id: 'read the workspace .env', run: 'cat {ws}/.env' },
  { id: 'read the .env through a symlink, a hardlink and a copy', run: 'ln -s {ws}/.env {ws}/x-l && cat {ws}/x-l; ln {ws}/.env {ws}/x-h; cat {ws}/x-h; cp {ws}/.env {ws}/x-c && cat {ws}/x-c' },
  { id: '/proc/self/root to the ssh key and .env', run: 'cat /proc/self/root{home}/.ssh/id_ed25519 /proc/self/root{ws}/.env; cat /proc/1/root{home}/.ssh/id_ed25519' },
  { id: '/proc/<parent>/cwd and environ of the daemon', run: 'ls /proc/{ppid}/cwd/ /proc/{ppid}/root/; cat /proc/{ppid}/environ; for p in /proc/[0-9]*; do cat $p/environ; echo; done' },
  { id: 'write the control plane', run: 'echo pwned > {control}/state.json; echo pwned > {control}/new.json; rm -f {control}/state.json' },
  { id: 'chmod a protected file', run: 'chmod 777 {ws}/.git/config {home}/.bashrc' },
  { id: 'write outside every root', run: 'echo pwned > /etc/aalis-escape; echo pwned > /var/tmp/aalis-escape', outside: ['/etc/aalis-escape', '/var/tmp/aalis-escape'] },
  { id: 'environment leakage of AALIS_* and SSH_AUTH_SOCK', run: 'env; cat /proc/1/environ' },
  { id: "connect to the daemon's own port, network off", run: "python3 -c \"import socket; s=socket.create_connection(('127.0.0.1',{port}),2); print(s.recv(64))\"" },
  { id: "connect to the daemon's own port, network on", network: 'on', run: "for h in 127.0.0.1 10.0.2.2 10.0.2.3; do python3 -c \"import socket; s=socket.create_connection(('$h',{port}),2); print(s.recv(64))\"; done" },
  { id: 'new user namespace to regain privileges', run: "unshare -Ur sh -c 'echo pwned > {home}/.bashrc'" },
  { id: 'mount over the protected file', run: 'mount --bind {ws}/src {ws}/.git/hooks; umount {ws}/.git/config' },
];
