import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keepAliveClient } from '../../load/keep-alive';

/**
 * The flash sale's HTTP client (load/keep-alive.ts) against a server that
 * records what it receives: it must send the method, path, headers and body
 * it is given, read any status and body as an answer, keep its connections
 * for the next requests, and fail only when the connection does.
 */
interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  socket: number;
}

let server: Server;
let base: string;
const received: Received[] = [];
const sockets = new WeakMap<object, number>();

beforeAll(async () => {
  let nextSocket = 0;
  server = createServer((req, res) => {
    if (!sockets.has(req.socket)) sockets.set(req.socket, ++nextSocket);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        socket: sockets.get(req.socket)!,
      });
      const status = req.url?.endsWith('/missing') ? 404 : 201;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: body }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
beforeEach(() => {
  received.length = 0;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test('sends the method, path, headers and body, and reads the answer', async () => {
  const send = keepAliveClient(`${base}/stage/`, 2);
  const body = JSON.stringify({ quantity: 1, note: 'é' });
  const answer = await send('POST', '/products/p1/reservations', { authorization: 'Bearer t' }, body);
  expect(answer).toEqual({ status: 201, text: JSON.stringify({ echo: body }) });
  expect(received).toHaveLength(1);
  const [r] = received;
  expect(r!.method).toBe('POST');
  expect(r!.url).toBe('/stage/products/p1/reservations');
  expect(r!.headers.authorization).toBe('Bearer t');
  expect(r!.headers['content-length']).toBe(String(Buffer.byteLength(body)));
  expect(r!.body).toBe(body);
});

test('any status is an answer, not a failure', async () => {
  const send = keepAliveClient(base, 1);
  await expect(send('GET', '/missing', {})).resolves.toEqual({
    status: 404,
    text: JSON.stringify({ echo: '' }),
  });
});

test('requests in turn share one kept-alive connection; requests at once open one each, up to the bound', async () => {
  const send = keepAliveClient(base, 2);
  for (let i = 0; i < 3; i++) await send('GET', `/one/${i}`, {});
  expect(new Set(received.map((r) => r.socket)).size).toBe(1);
  received.length = 0;
  await Promise.all(Array.from({ length: 6 }, (_, i) => send('GET', `/many/${i}`, {})));
  expect(received).toHaveLength(6);
  expect(new Set(received.map((r) => r.socket)).size).toBe(2);
});

test('fails when the connection does', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise((resolve) => closed.close(resolve));
  await expect(keepAliveClient(`http://127.0.0.1:${port}`, 1)('GET', '/', {})).rejects.toThrow(
    /ECONNREFUSED/,
  );
});

test('speaks plain HTTP only', () => {
  expect(() => keepAliveClient('https://127.0.0.1:3000', 1)).toThrow(/plain HTTP only/);
});
