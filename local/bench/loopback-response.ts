import { fork } from 'node:child_process';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isMainThread, Worker, workerData } from 'node:worker_threads';

/**
 * What one HTTP response costs the thread that sends it, as the local cloud's
 * AWS endpoint answers a sandbox: a keep-alive server on 127.0.0.1 in the main
 * thread, client worker threads (`--clients`, as sandboxes) each sending
 * DynamoDB-sized requests one at a time, and the server thread's CPU
 * (`process.threadCpuUsage`) around each `res.end`: the socket write, in which
 * the kernel also delivers the bytes over loopback and wakes the thread waiting
 * for them. `--burners N` first starts N processes that spin for the run's
 * length, as a loaded host's other threads compete for its cores; `--unix`
 * serves on a Unix socket instead of TCP, to tell the transport's share.
 *
 *   npx tsx local/bench/loopback-response.ts [--requests 5000] [--clients 1] [--burners 0|1|2] [--unix]
 */
const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '5000' },
    burners: { type: 'string', default: '0' },
    clients: { type: 'string', default: '1' },
    unix: { type: 'boolean', default: false },
    burn: { type: 'string' },
  },
});

const REQUEST = '{"TableName":"OrdersEventsTable","Key":{"aggregateId":{"S":"ord_1"},"version":{"N":"1"}}}';
const RESPONSE = JSON.stringify({
  Item: { aggregateId: { S: 'ord_1' }, version: { N: '1' }, type: { S: 'x'.repeat(300) } },
});

type Address = { port: number } | { socketPath: string };

async function client({ address, requests }: { address: Address; requests: number }) {
  const agent = new Agent({ keepAlive: true });
  for (let i = 0; i < requests; i++) {
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', ...address, method: 'POST', agent }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(REQUEST);
    });
  }
  agent.destroy();
}

async function main() {
  const requests = Number(values.requests);
  const burners = Array.from({ length: Number(values.burners) }, () =>
    fork(__filename, ['--burn', '60000'], { execArgv: ['--import', 'tsx'] }),
  );
  let cpuUs = 0;
  let answered = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': RESPONSE.length });
      const before = process.threadCpuUsage();
      res.end(RESPONSE);
      const spent = process.threadCpuUsage(before);
      cpuUs += spent.user + spent.system;
      answered++;
    });
  });
  const socketPath = join(tmpdir(), `loopback-response-${process.pid}.sock`);
  await new Promise<void>((resolve) =>
    values.unix ? server.listen(socketPath, resolve) : server.listen(0, '127.0.0.1', resolve),
  );
  const address: Address = values.unix ? { socketPath } : { port: (server.address() as AddressInfo).port };
  const workers = Array.from(
    { length: Number(values.clients) },
    () => new Worker(__filename, { workerData: { address, requests }, execArgv: ['--import', 'tsx'] }),
  );
  await Promise.all(
    workers.map((w) => new Promise((resolve, reject) => w.on('exit', resolve).on('error', reject))),
  );
  for (const burner of burners) burner.kill();
  server.close();
  console.log(
    `${values.unix ? 'Unix socket' : 'TCP 127.0.0.1'}: ${answered} responses to ${workers.length} client thread(s), ${burners.length} burner(s): ${(cpuUs / answered).toFixed(1)} µs of the server thread's CPU per res.end`,
  );
}

if (values.burn !== undefined) {
  // A burner: spins until its time is up (or the bench kills it), so that the run is bounded either way.
  const until = Date.now() + Number(values.burn);
  while (Date.now() < until);
} else if (isMainThread) void main();
else void client(workerData);
