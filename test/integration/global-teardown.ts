import type { LocalProcess } from '@commerce/local-cloud';

export default async function globalTeardown() {
  await Promise.all((globalThis as { localClouds?: LocalProcess[] }).localClouds?.map((c) => c.stop()) ?? []);
}
