import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE_DIR, type LocalProcess, startLocalProcess } from '@commerce/local-cloud';

/** The assembly (and so the run directory: logs, dead letters) of the cloud of Jest worker `worker`. */
const assemblyOf = (worker: number) =>
  join(CACHE_DIR, worker === 1 ? 'assembly-test' : `assembly-test-${worker}`);

const start = (worker: number) =>
  startLocalProcess(['--port', '0', '--assembly-dir', assemblyOf(worker), '--schedule-interval-ms', '500']);

/**
 * Starts one local cloud per Jest worker for the integration suite, each from
 * an assembly of its own (so that `npm start`'s cdk.out is left alone, and no
 * two clouds share logs or dead letters), with the expiry sweeper running
 * every 500 ms. A test file runs on one worker and sees only that worker's
 * cloud (integration-worker.ts): the suites' counters, faults and quiescence
 * are a cloud's, so no file can disturb another's.
 */
export default async function globalSetup(globalConfig: { maxWorkers: number }) {
  const workers = Math.max(1, globalConfig.maxWorkers);
  // The first synthesizes its assembly if it is stale; the others start from copies of it.
  const clouds: LocalProcess[] = [await start(1)];
  for (let worker = 2; worker <= workers; worker++) {
    rmSync(assemblyOf(worker), { recursive: true, force: true });
    cpSync(assemblyOf(1), assemblyOf(worker), { recursive: true });
  }
  clouds.push(...(await Promise.all(Array.from({ length: workers - 1 }, (_, i) => start(i + 2)))));
  clouds.forEach((cloud, i) => {
    process.env[`LOCAL_API_URL_${i + 1}`] = cloud.apiUrl;
    process.env[`LOCAL_AWS_ENDPOINT_${i + 1}`] = cloud.awsEndpoint;
  });
  (globalThis as { localClouds?: LocalProcess[] }).localClouds = clouds;
}
