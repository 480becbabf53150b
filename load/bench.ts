import { cpus, totalmem } from 'node:os';

/** What the benchmarks share: the target, a JSON call, percentiles, and the machine they ran on. */
export const API = process.env.API_URL ?? 'http://127.0.0.1:3000';

export async function call(method: string, path: string, body?: unknown) {
  const r = await fetch(`${API}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** The nearest-rank percentile of ascending `sorted`. */
export const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;

export const machine = () =>
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}`;
