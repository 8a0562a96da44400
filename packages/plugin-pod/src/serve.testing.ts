import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type PodCaller, podRoutes } from './http.js';
import type { PodService } from './service.js';

/** Serves the pod's routes on a plain node:http server on a free loopback port, as the console would mount them, every request as `caller` (the owner's token by default). */
export async function servePod(service: PodService, caller: PodCaller = 'owner'): Promise<{ url: string; close(): Promise<void> }> {
  const routes = podRoutes(service);
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
    routes(req, res, url, caller).then(
      (handled) => {
        if (!handled) res.writeHead(404, { 'content-type': 'text/plain' }).end('not a pod route');
      },
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
