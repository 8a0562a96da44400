import { describe, expect, it } from 'vitest';
import { groupSockets, runtimeDirOf } from './socket-groups.js';

describe('runtimeDirOf', () => {
  it.each([
    ['/run/docker/containerd/containerd.sock', '/run/docker'],
    ['/run/docker.sock', undefined], // directly in /run: /run itself is never hidden whole
    ['/run/user/1000/bus', '/run/user/1000'],
    ['/run/user/1000/gnupg/S.gpg-agent', '/run/user/1000'],
    ['/run/user/1000', undefined],
    ['/home/a/.gnupg/S.gpg-agent', undefined],
    ['/var/run/x/y.sock', undefined], // callers pass real paths; /var/run is /run
  ])('%s → %s', (socket, dir) => {
    expect(runtimeDirOf(socket)).toBe(dir);
  });
});

describe('groupSockets', () => {
  const docker = ['/run/docker/containerd/containerd.sock', '/run/docker/containerd/containerd.sock.ttrpc', '/run/docker/metrics.sock', '/run/docker/libnetwork/1.sock'];
  it('hides a runtime directory with several sockets whole, and single sockets one by one', () => {
    expect(groupSockets([...docker, '/run/docker.sock', '/run/dbus/system_bus_socket', '/home/a/agent.sock'], [], [])).toEqual({
      dirs: ['/run/docker'],
      files: ['/home/a/agent.sock', '/run/dbus/system_bus_socket', '/run/docker.sock'],
    });
  });

  it('leaves a directory alone when something the sandbox must see is inside it', () => {
    expect(groupSockets(docker, ['/run/docker/plugins'], []).dirs).toEqual([]);
    expect(groupSockets(docker, ['/run/docker/plugins'], []).files).toEqual([...docker].sort());
  });

  it('leaves a directory alone when the resolver configuration lives in it', () => {
    const systemd = ['/run/systemd/journal/socket', '/run/systemd/notify', '/run/systemd/private'];
    expect(groupSockets(systemd, [], ['/run/systemd/resolve/stub-resolv.conf']).dirs).toEqual([]);
    expect(groupSockets(systemd, [], ['/etc/hosts']).dirs).toEqual(['/run/systemd']);
  });

  it('does not group fewer than two sockets', () => {
    expect(groupSockets(['/run/one/a.sock'], [], [])).toEqual({ dirs: [], files: ['/run/one/a.sock'] });
  });
});
