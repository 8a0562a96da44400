import { joinPath } from './path.js';

/**
 * Files outside any home that hold the machine's own secrets (password hashes, sudo rules, the
 * SSH host keys, TLS private keys). Only root can read them, which is exactly when they matter: a
 * daemon run as root runs its sandboxed commands as the host's uid 0 (without capabilities), and
 * those could otherwise read them. Denied on every platform's deny-read list; for an ordinary
 * user the kernel refuses them anyway.
 */
export function systemSecretPaths(platform: NodeJS.Platform): readonly string[] {
  if (platform === 'darwin') {
    return [
      '/private/etc/master.passwd',
      '/private/etc/sudoers',
      '/private/etc/sudoers.d',
      '/private/var/db/dslocal',
      '/private/var/db/sudo',
      '/Library/Keychains/System.keychain',
      ...sshHostKeys('/private/etc/ssh'),
    ];
  }
  if (platform === 'linux') {
    return [
      '/etc/shadow',
      '/etc/shadow-',
      '/etc/gshadow',
      '/etc/gshadow-',
      '/etc/sudoers',
      '/etc/sudoers.d',
      '/etc/security/opasswd',
      '/etc/ssl/private',
      '/etc/krb5.keytab',
      ...sshHostKeys('/etc/ssh'),
    ];
  }
  return [];
}

/** The host private keys sshd makes (their `.pub` halves stay readable). */
function sshHostKeys(dir: string): string[] {
  return ['rsa', 'ecdsa', 'ed25519', 'dsa'].map((kind) => joinPath(dir, `ssh_host_${kind}_key`));
}
