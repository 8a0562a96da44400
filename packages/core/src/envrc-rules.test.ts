import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { envrcRules } from './landing-extras.js';

/*
 * envrcRules on real files: what an `.envrc` loads, and what the files it sources load in turn
 * (h115 E8), without turning an everyday virtualenv into a folder protected whole.
 */

const root = realpathSync.native(mkdtempSync(join(tmpdir(), 'aalis-envrc-rules-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(root, 'p-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const pathsOf = (dir: string) => envrcRules([join(dir, '.envrc')]).flatMap((r) => ('path' in r ? [r.path] : []));

describe('envrcRules: what the sourced files load', () => {
  it('a file the sourced lib.sh sources is a landing, missing or there, from either folder', () => {
    const dir = project({ '.envrc': 'source_env lib/lib.sh\n', 'lib/lib.sh': '. ./more.sh\nsource helpers.sh\n' });
    const paths = pathsOf(dir);
    expect(paths).toContain(join(dir, 'lib', 'lib.sh'));
    // bash's source keeps the .envrc's folder; direnv's source_env enters lib/: both are protected
    expect(paths).toEqual(expect.arrayContaining([join(dir, 'more.sh'), join(dir, 'lib', 'more.sh'), join(dir, 'helpers.sh'), join(dir, 'lib', 'helpers.sh')]));
  });

  it('three levels, and a loop of sources, end', () => {
    const dir = project({ '.envrc': 'source_env a.sh\n', 'a.sh': 'source b.sh\n', 'b.sh': 'source a.sh\nsource c.sh\n', 'c.sh': 'source d.sh\n' });
    const paths = pathsOf(dir);
    expect(paths).toEqual(expect.arrayContaining([join(dir, 'a.sh'), join(dir, 'b.sh'), join(dir, 'c.sh'), join(dir, 'd.sh')]));
  });

  it("a virtualenv's activate does not protect the project, only what is its own", () => {
    const dir = project({ '.envrc': 'source .venv/bin/activate\n' });
    const activate = `deactivate () {\n  unset VIRTUAL_ENV\n}\nVIRTUAL_ENV="${join(dir, '.venv')}"\nexport VIRTUAL_ENV\n_OLD_VIRTUAL_PATH="$PATH"\nPATH="$VIRTUAL_ENV/bin:$PATH"\nexport PATH\nhash -r 2> /dev/null\n`;
    mkdirSync(join(dir, '.venv', 'bin'), { recursive: true });
    writeFileSync(join(dir, '.venv', 'bin', 'activate'), activate);
    const paths = pathsOf(dir);
    expect(paths).toContain(join(dir, '.venv', 'bin', 'activate'));
    expect(paths.filter((p) => p === dir || p.startsWith(`${dir}/`)).every((p) => p.startsWith(join(dir, '.venv')))).toBe(true);
  });

  it('data files it names (a dotenv, a flake) are not read as shell', () => {
    const dir = project({ '.envrc': 'dotenv\nuse flake\n', '.env': 'A=./evil.sh\n', 'flake.nix': '{ outputs = { self }: import ./shell.nix; }\n' });
    const paths = pathsOf(dir);
    expect(paths).not.toContain(join(dir, 'evil.sh'));
  });

  it('a node_modules/.bin on PATH: the names a person types are strict landings, the installs\' names are not', () => {
    const dir = project({ '.envrc': 'PATH_add node_modules/.bin\n' });
    const strict = envrcRules([join(dir, '.envrc')]).flatMap((r) => ('pattern' in r && r.strict === true ? [new RegExp(r.pattern)] : []));
    expect(strict).toHaveLength(1);
    expect(strict[0]!.test(join(dir, 'node_modules', '.bin', 'git'))).toBe(true);
    expect(strict[0]!.test(join(dir, 'node_modules', '.bin', 'tsc'))).toBe(false);
    expect(strict[0]!.test(join(dir, 'node_modules', '.bin', 'git-x'))).toBe(false);
  });
});
