import { createHash } from 'node:crypto';

/** How many times the workload runs; the figure is the median, so a moment's preemption does not make it. */
const RUNS = 5;
const WARM_UP_RUNS = 3;
const ROUNDS = 50_000;
const ORDER = {
  orderId: 'ord_probe',
  customerId: 'cus_probe',
  items: [
    { productId: 'prd_probe_a', quantity: 1, priceCents: 1_250 },
    { productId: 'prd_probe_b', quantity: 3, priceCents: 990 },
  ],
};

/** One run of the workload: what a request does most, JSON and hashing, on one thread. Returns its digest. */
function workload(): string {
  const hash = createHash('sha256');
  for (let round = 0; round < ROUNDS; round++) {
    const text = JSON.stringify({ ...ORDER, round });
    hash.update(text);
    hash.update(String((JSON.parse(text) as { round: number }).round));
  }
  return hash.digest('hex');
}

/**
 * The machine's speed for one thread now, as the wall time of a fixed
 * workload (median of RUNS), ms, with its digest (the same for every run of
 * the same workload: a changed workload makes earlier figures incomparable).
 * Hosts of the same type differ from day to day when their neighbours are
 * busy: measured on 2026-11-26, the AWS SDK's CPU per DynamoDB call
 * (local/bench/sdk-call.ts, since removed) was 0.64–0.89 ms against 0.47 two
 * days before on the same code, and a 20/s level's CPU per transaction ranged
 * 35–79 ms. A load report prints this figure before and after its run, so
 * that runs are compared on the machine they had.
 */
export function cpuProbe(): { ms: number; digest: string } {
  // The first runs compile the workload (in a fresh process they took up to twice as long): not timed.
  for (let run = 0; run < WARM_UP_RUNS; run++) workload();
  const times: number[] = [];
  let digest = '';
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    digest = workload();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(RUNS / 2)]!, digest };
}
