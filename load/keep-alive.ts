/**
 * HTTP requests over kept-alive connections with `node:http`, for a driver that shares the machine
 * with the local cloud it drives: every millisecond of CPU the driver takes is one the platform does
 * not get. With `fetch` (undici) the flash sale's driver spent about 0.9 ms more per request
 * (docs/flash-sales.md).
 */
import { Agent, type OutgoingHttpHeaders, request } from 'node:http';

export interface Answer {
  readonly status: number;
  readonly text: string;
}

/** `send(method, path, headers, body?)` to `baseUrl` (http), over up to `connections` open connections. */
export function keepAliveClient(baseUrl: string, connections: number) {
  const base = new URL(baseUrl);
  if (base.protocol !== 'http:') throw new Error(`${baseUrl}: a kept-alive client speaks plain HTTP only`);
  // Idle kept-alive sockets do not hold the process open (the agent unrefs them).
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const prefix = base.pathname.replace(/\/$/, '');
  /** Rejects only when the connection fails; any status is an answer. */
  return (method: string, path: string, headers: OutgoingHttpHeaders, body?: string) =>
    new Promise<Answer>((resolve, reject) => {
      const sent = request(
        {
          agent,
          method,
          hostname: base.hostname,
          port: base.port,
          path: prefix + path,
          headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          response.on('error', reject);
        },
      );
      sent.on('error', reject);
      sent.end(body);
    });
}
