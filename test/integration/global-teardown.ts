import type { LocalProcess } from '@commerce/local-cloud';

export default async function globalTeardown() {
  await (globalThis as { localCloud?: LocalProcess }).localCloud?.stop();
}
