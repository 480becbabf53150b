import type { LocalProcess } from '../support/local-process';

export default async function globalTeardown() {
  await (globalThis as { localCloud?: LocalProcess }).localCloud?.stop();
}
