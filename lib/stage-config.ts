import { Duration, RemovalPolicy } from 'aws-cdk-lib';

export const STAGES = ['dev', 'staging', 'prod'] as const;
export type StageName = (typeof STAGES)[number];

/** Everything that differs between stages, as typed code (snapshot-tested). */
export interface StageConfig {
  readonly stage: StageName;
  /** STANDARD: exactly-once steps and full console history; EXPRESS: cheaper, at-least-once. */
  readonly workflowType: 'STANDARD' | 'EXPRESS';
  /** After this long a saga is undone and its order cancelled with TIMEOUT. */
  readonly sagaDeadline: Duration;
  /** How long past its deadline an order may stay PENDING before the sweeper cancels and undoes it. */
  readonly sweeperGrace: Duration;
  /** A reservation neither released nor committed expires after this long. */
  readonly reservationTtl: Duration;
  /** How often the expiry sweeper runs; a reservation may outlive `expiresAt` by up to this. */
  readonly expirySweepInterval: Duration;
  /** Stock shards: one per this many units at creation, at most `maxStockShards`. */
  readonly stockUnitsPerShard: number;
  readonly maxStockShards: number;
  readonly logRetentionDays: number;
  readonly removalPolicy: RemovalPolicy;
  readonly pointInTimeRecovery: boolean;
  readonly logLevel: 'DEBUG' | 'INFO' | 'WARN';
}

const shared = {
  sagaDeadline: Duration.seconds(30),
  sweeperGrace: Duration.seconds(60),
  reservationTtl: Duration.minutes(15),
  expirySweepInterval: Duration.minutes(1),
  stockUnitsPerShard: 1250,
  maxStockShards: 64,
} as const;

export const STAGE_CONFIGS: Readonly<Record<StageName, StageConfig>> = {
  dev: {
    ...shared,
    stage: 'dev',
    workflowType: 'STANDARD',
    logRetentionDays: 7,
    removalPolicy: RemovalPolicy.DESTROY,
    pointInTimeRecovery: false,
    logLevel: 'INFO',
  },
  staging: {
    ...shared,
    stage: 'staging',
    workflowType: 'EXPRESS',
    logRetentionDays: 30,
    removalPolicy: RemovalPolicy.DESTROY,
    pointInTimeRecovery: true,
    logLevel: 'INFO',
  },
  prod: {
    ...shared,
    stage: 'prod',
    workflowType: 'STANDARD',
    logRetentionDays: 365,
    removalPolicy: RemovalPolicy.RETAIN,
    pointInTimeRecovery: true,
    logLevel: 'WARN',
  },
};

/**
 * The stage's config, with the few overrides that tests and local runs need
 * (short deadlines and TTLs) taken from CDK context, checked like the rest.
 */
export function stageConfig(stage: string, context: (key: string) => unknown = () => undefined): StageConfig {
  if (!(STAGES as readonly string[]).includes(stage)) {
    throw new Error(`unknown stage "${stage}": use one of ${STAGES.join(', ')}`);
  }
  const base = STAGE_CONFIGS[stage as StageName];
  const seconds = (key: string, fallback: Duration) => {
    const value = context(key);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1)
      throw new Error(`context ${key} must be a whole number of seconds ≥ 1`);
    return Duration.seconds(n);
  };
  return {
    ...base,
    sagaDeadline: seconds('sagaDeadlineSeconds', base.sagaDeadline),
    reservationTtl: seconds('reservationTtlSeconds', base.reservationTtl),
    sweeperGrace: seconds('sweeperGraceSeconds', base.sweeperGrace),
  };
}
