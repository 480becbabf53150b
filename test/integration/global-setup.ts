import { join } from 'node:path';
import { CACHE_DIR, startLocalProcess } from '@commerce/local-cloud';

/**
 * Starts one local cloud for the integration suite from its own assembly
 * (so that `npm start`'s cdk.out is left alone), with the expiry sweeper
 * running every 500 ms.
 */
export default async function globalSetup() {
  const cloud = await startLocalProcess([
    '--port',
    '0',
    '--assembly-dir',
    join(CACHE_DIR, 'assembly-test'),
    '--schedule-interval-ms',
    '500',
  ]);
  process.env.LOCAL_API_URL = cloud.apiUrl;
  process.env.LOCAL_AWS_ENDPOINT = cloud.awsEndpoint;
  (globalThis as { localCloud?: unknown }).localCloud = cloud;
}
