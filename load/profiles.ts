import type { SeedOptions } from './seed';
/**
 * The load profiles. Each runs the same workload, the replaced systems' mix:
 * every iteration is one weighted operation — place an order (1–3 items),
 * reserve stock, or create a customer — arriving at a constant rate (open
 * model: arrivals do not wait for answers). A share of the placed orders is
 * followed by polling until final, which measures the saga end to end.
 */
export interface Profile {
  readonly name: 'mix' | 'smoke' | 'soak';
  readonly description: string;
  /** Arrival rates (iterations per second), run one after the other. */
  readonly levels: readonly number[];
  /** Seconds at each level. */
  readonly durationSeconds: number;
  /**
   * Seconds of the mix at the first level's rate before the first level, not measured (its orders are
   * checked with the rest): a fresh target's JIT compilers and function sandboxes warm up in it.
   * Every function's first sandboxes start during the first seconds of load, and V8 compiles the
   * code the calls run (the DynamoDB engine's included) as it turns hot.
   */
  readonly warmUpSeconds: number;
  readonly weights: {
    readonly placeOrder: number;
    readonly reserveStock: number;
    readonly createCustomer: number;
  };
  /** Share of placed orders polled until final. */
  readonly pollFraction: number;
  /**
   * Orders are sent with `Prefer: wait=N` (`--wait N`, 1–10): an order whose saga ends within N s is
   * answered `201` final, and a followed one is then measured from that answer, with no poll.
   */
  readonly waitSeconds?: number;
  readonly pollIntervalMs: number;
  /** A followed saga counts as missing the limit if not seen final within it. */
  readonly sagaLimitSeconds: number;
  /**
   * Fail the run on any error or dropped iteration, not only on a broken invariant. A saga over the
   * limit is reported, not failed on: it is a latency (a loaded machine makes it), and that every saga
   * ends is an invariant checked after the run.
   */
  readonly failOnError: boolean;
  /** Memory and latency sampled over time (the soak). */
  readonly sampleEverySeconds?: number;
  /** Seeded customers and products when the run seeds its own data. */
  readonly seed: Pick<SeedOptions, 'customers' | 'products' | 'scarce' | 'tight'>;
}

const weights = { placeOrder: 60, reserveStock: 25, createCustomer: 15 } as const;

export const PROFILES: Readonly<Record<Profile['name'], Profile>> = {
  mix: {
    name: 'mix',
    description: 'the replaced systems’ workload at rising constant arrival rates',
    levels: [10, 25, 50, 100, 200, 500],
    durationSeconds: 60,
    warmUpSeconds: 15,
    weights,
    pollFraction: 0.1,
    pollIntervalMs: 100,
    sagaLimitSeconds: 10,
    // Levels past what the target sustains are measurements, not failures.
    failOnError: false,
    seed: { customers: 100, products: 100 },
  },
  smoke: {
    name: 'smoke',
    description: 'a few seconds of the mix at 5/s, every order followed to its end (CI)',
    levels: [5],
    durationSeconds: 5,
    warmUpSeconds: 0,
    weights,
    pollFraction: 1,
    pollIntervalMs: 100,
    sagaLimitSeconds: 10,
    failOnError: true,
    seed: { customers: 5, products: 5 },
  },
  soak: {
    name: 'soak',
    description: 'the mix at one rate for a long time, memory and latency sampled over time',
    levels: [50],
    durationSeconds: 30 * 60,
    warmUpSeconds: 15,
    weights,
    pollFraction: 0.1,
    pollIntervalMs: 100,
    sagaLimitSeconds: 10,
    // Its rate is meant to be sustained: an error over half an hour is a finding to fail on.
    failOnError: true,
    sampleEverySeconds: 10,
    seed: { customers: 100, products: 100 },
  },
};

/** `--wait N`: the contract's `Prefer: wait=N` takes whole seconds from 1 to 10. */
export function waitOption(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n < 1 || n > 10)
    throw new Error(`--wait must be a whole number of seconds from 1 to 10, not ${value}`);
  return n;
}

/** The operations as the report names them (Artillery request names). */
export const OPERATIONS = {
  place_order: 'POST /orders',
  reserve_stock: 'POST /products/{id}/reservations',
  create_customer: 'POST /customers',
  get_order: 'GET /orders/{id} (saga polls)',
} as const;
export type Operation = keyof typeof OPERATIONS;

/** The statuses an operation answers when it works. */
export const EXPECTED_STATUS: Readonly<Record<Operation, number>> = {
  place_order: 202,
  reserve_stock: 201,
  create_customer: 201,
  get_order: 200,
};

/** The statuses of an operation that count as working in a run; with `--wait`, an order may also be `201` (final). */
export const expectedStatuses = (op: Operation, waitSeconds: number | undefined): readonly number[] =>
  op === 'place_order' && waitSeconds !== undefined ? [201, EXPECTED_STATUS[op]] : [EXPECTED_STATUS[op]];
