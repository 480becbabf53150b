import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { STAGE_SETTINGS } from '../config/stages';
import { ACCOUNTS_ROUTES } from '../functions/accounts/seams';
import { INVENTORY_ROUTES } from '../functions/inventory/seams';
import { ORDERS_ROUTES } from '../functions/orders/seams';
import { checkedSettings, STAGE_SETTINGS_FILE, type StageSettingsFile } from './stage-settings';

export const STAGES = ['dev', 'staging', 'prod'] as const;
export type StageName = (typeof STAGES)[number];

/** A token bucket of API Gateway: requests per second in the steady state, and the bucket's size. */
export interface Throttle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/**
 * What each function does, which decides how much concurrency it may take. A
 * sweeper reserves 1 where it reserves at all: two sweeps at once would only race.
 */
export type FunctionKind = 'api' | 'docs' | 'projector' | 'publisher' | 'sagaStep' | 'sweeper';

/** The thresholds at which an operator is paged (alarms to the stage's SNS topic). */
export interface AlarmThresholds {
  /** 5xx answers of the HTTP API in five minutes: any is a fault of ours (bad input is always a 4xx). */
  readonly api5xxPerFiveMinutes: number;
  /** p95 latency of the HTTP API over five minutes, three periods in a row. */
  readonly apiP95LatencyMs: number;
  /** Age of the oldest stream record a projector or the outbox relay has not processed. */
  readonly streamIteratorAgeMs: number;
  /** Saga executions failed, timed out or aborted (not cancelled orders: those end in success) in five minutes. */
  readonly sagaExecutionFailuresPerFiveMinutes: number;
  /** Orders cancelled because the saga ran past its deadline, in five minutes. */
  readonly sagaTimeoutsPerFiveMinutes: number;
  /** Throttled invocations of any one function in five minutes. */
  readonly lambdaThrottlesPerFiveMinutes: number;
  /** Orders the sweeper cancelled in five minutes: each is a saga that did not finish on its own. */
  readonly sweeperCancellationsPerFiveMinutes: number;
  /** Cancellations (the saga sweeper) or expiries (the reservation sweeper) that failed, in five minutes. */
  readonly sweeperFailuresPerFiveMinutes: number;
  /**
   * The share of a limit (a route's throttle, the account's Step Functions
   * refill rates) at which an operator is warned, two minutes running,
   * before requests are refused (docs/capacity.md).
   */
  readonly capacityWarningPercent: number;
}

/** An identity provider outside the stack: tokens from `issuer` whose `aud` (or `client_id`) is one of `audience`. */
export interface JwtAuthorizerConfig {
  readonly issuer: string;
  readonly audience: readonly string[];
}

/** The stack's own Cognito user pool, made when the stage names no external issuer. */
export interface UserPoolConfig {
  /** Where the shoppers' app client may send the authorization code (https, or http on localhost). */
  readonly callbackUrls: readonly string[];
  readonly logoutUrls: readonly string[];
  /** The pool and its clients: identities are not test data to throw away on the stages that keep data. */
  readonly removalPolicy: RemovalPolicy;
}

/** Everything that differs between stages, as typed code (snapshot-tested). */
export interface StageConfig {
  readonly stage: StageName;
  /** STANDARD: exactly-once steps and full console history; EXPRESS: cheaper, at-least-once. */
  readonly workflowType: 'STANDARD' | 'EXPRESS';
  /**
   * After this long a saga is undone and its order cancelled with TIMEOUT.
   * An order whose request started no execution begins its saga from the bus
   * after the outbox relay's batching window (docs/saga.md), so a deadline of
   * a few seconds leaves such a saga little time; the tests that shorten it do
   * so to see the sweeper at work.
   */
  readonly sagaDeadline: Duration;
  /** How long past its deadline an order may stay PENDING before the sweeper cancels and undoes it. */
  readonly sweeperGrace: Duration;
  /** A reservation neither released nor committed expires after this long. */
  readonly reservationTtl: Duration;
  /** How often the expiry sweeper runs; a reservation may outlive `expiresAt` by up to this. */
  readonly expirySweepInterval: Duration;
  /**
   * How long Lambda gathers a table's stream records before it invokes a
   * consumer (the projectors, the outbox relay) with a batch: no request
   * waits on them (reads by id come from the event store, and the placing
   * request starts its saga itself), so fewer, larger batches only cost
   * freshness of the product views and the bus's copy of `OrderPlaced`.
   */
  readonly streamBatchingWindow: Duration;
  /** Stock shards: one per this many units at creation, at most `maxStockShards`. */
  readonly stockUnitsPerShard: number;
  readonly maxStockShards: number;
  readonly logRetentionDays: number;
  readonly removalPolicy: RemovalPolicy;
  readonly pointInTimeRecovery: boolean;
  /** DynamoDB deletion protection on every table: a table cannot be deleted, by CloudFormation or by hand, until it is turned off. */
  readonly tableDeletionProtection: boolean;
  /** CloudFormation termination protection on the stack: `cdk destroy` and a stack deletion are refused. */
  readonly terminationProtection: boolean;
  readonly logLevel: 'DEBUG' | 'INFO' | 'WARN';
  /**
   * Each function's bundle ships its source map (an `index.js.map` beside
   * it, not inlined: the bundle itself stays as small), so that a stack trace
   * from the stage can be mapped to the sources. Not applied at run time
   * (`--enable-source-maps` makes every thrown error, a lost
   * optimistic-concurrency race or a 409, expensive on the hot path): a
   * debug build (`-c debugBundles=true`) does that.
   */
  readonly sourceMaps: boolean;
  /**
   * Throttling of the HTTP API stage, as the replaced systems' gateway rate
   * limiting did: `default` for every route, `routes` per route key.
   */
  readonly apiThrottle: { readonly default: Throttle; readonly routes: Readonly<Record<string, Throttle>> };
  /** Reserved concurrency of each kind of function; undefined takes from the account's unreserved pool. */
  readonly reservedConcurrency: Readonly<Record<FunctionKind, number | undefined>>;
  readonly alarms: AlarmThresholds;
  /**
   * The issuer of the tokens the API's JWT authorizer accepts. Undefined: the
   * stage makes its own Cognito user pool (`userPool`) and trusts that.
   * Every route but the documentation takes a token on every stage either way.
   */
  readonly externalIssuer: JwtAuthorizerConfig | undefined;
  /** The stage's own user pool, when it has no external issuer. */
  readonly userPool: UserPoolConfig;
  /**
   * The most units of one product one shop caller (`sub`) may hold in live
   * reservations at once; beyond it `409 HOLD_LIMIT_REACHED`. Admins are not
   * limited. Keeps one client from holding a flash sale's stock.
   */
  readonly holdLimitPerCaller: number;
  /** Subscribed to the alarm topic when given; other subscribers are added outside the stack. */
  readonly alarmEmail: string | undefined;
  /** The account and region the stack is pinned to; undefined (dev): those of the deployer's credentials. */
  readonly env: { readonly account: string; readonly region: string } | undefined;
  /** Tagged on the stack and every resource in it: `project`, `stage`, and the owner and cost centre when set. */
  readonly tags: Readonly<Record<string, string>>;
}

/** The settings a deployment gives (config/stages.ts): the rest of a stage's config is reviewed here. */
type DeploymentKeys = 'externalIssuer' | 'userPool' | 'alarmEmail' | 'env' | 'tags';

/** A stage as reviewed engineering: everything but where and for whom it is deployed. */
export type StageShape = Omit<StageConfig, DeploymentKeys> & {
  /** The pool and its clients: identities are not test data to throw away on the stages that keep data. */
  readonly userPoolRemovalPolicy: RemovalPolicy;
};

/** The `project` tag on every resource of every stage. */
export const PROJECT_TAG = 'serverless-commerce';

const shared = {
  sagaDeadline: Duration.seconds(30),
  sweeperGrace: Duration.seconds(60),
  reservationTtl: Duration.minutes(15),
  expirySweepInterval: Duration.minutes(1),
  streamBatchingWindow: Duration.seconds(1),
  stockUnitsPerShard: 1250,
  maxStockShards: 64,
  holdLimitPerCaller: 10,
} as const;

/** The write routes that take the load: placing orders and holding stock in a flash sale. */
const ORDER_ROUTE = ORDERS_ROUTES.placeOrder;
const RESERVATION_ROUTE = INVENTORY_ROUTES.reserveStock;
/** Catalogue and customer writes are back-office traffic. */
const BACK_OFFICE_ROUTES = [
  ACCOUNTS_ROUTES.registerCustomer,
  INVENTORY_ROUTES.createProduct,
  INVENTORY_ROUTES.restockProduct,
];

const backOffice = (throttle: Throttle) =>
  Object.fromEntries(BACK_OFFICE_ROUTES.map((route) => [route, throttle]));

export const STAGE_CONFIGS: Readonly<Record<StageName, StageShape>> = {
  dev: {
    ...shared,
    stage: 'dev',
    workflowType: 'STANDARD',
    logRetentionDays: 7,
    removalPolicy: RemovalPolicy.DESTROY,
    pointInTimeRecovery: false,
    tableDeletionProtection: false,
    terminationProtection: false,
    logLevel: 'INFO',
    sourceMaps: true,
    // Generous on purpose: the load profiles (up to 500 iterations/s, a few requests each) run against dev,
    // locally and deployed, and measure the platform, not the throttle.
    apiThrottle: { default: { rateLimit: 5000, burstLimit: 5000 }, routes: {} },
    // A new account may have a concurrency limit of 10; reserving any would fail the deployment.
    reservedConcurrency: {
      api: undefined,
      docs: undefined,
      projector: undefined,
      publisher: undefined,
      sagaStep: undefined,
      sweeper: undefined,
    },
    alarms: {
      api5xxPerFiveMinutes: 10,
      apiP95LatencyMs: 2000,
      streamIteratorAgeMs: 300_000,
      sagaExecutionFailuresPerFiveMinutes: 5,
      sagaTimeoutsPerFiveMinutes: 50,
      lambdaThrottlesPerFiveMinutes: 50,
      sweeperCancellationsPerFiveMinutes: 10,
      sweeperFailuresPerFiveMinutes: 5,
      capacityWarningPercent: 80,
    },
    userPoolRemovalPolicy: RemovalPolicy.DESTROY,
  },
  staging: {
    ...shared,
    stage: 'staging',
    workflowType: 'EXPRESS',
    logRetentionDays: 30,
    removalPolicy: RemovalPolicy.DESTROY,
    pointInTimeRecovery: true,
    tableDeletionProtection: false,
    terminationProtection: false,
    logLevel: 'INFO',
    // Staging ships what prod ships.
    sourceMaps: false,
    apiThrottle: {
      default: { rateLimit: 200, burstLimit: 400 },
      routes: {
        [ORDER_ROUTE]: { rateLimit: 100, burstLimit: 200 },
        [RESERVATION_ROUTE]: { rateLimit: 500, burstLimit: 1000 },
        ...backOffice({ rateLimit: 20, burstLimit: 40 }),
      },
    },
    // The saga's one step function runs three steps per order (reserve, capture, confirm).
    reservedConcurrency: { api: 50, docs: 2, projector: 10, publisher: 20, sagaStep: 75, sweeper: 1 },
    alarms: {
      api5xxPerFiveMinutes: 5,
      apiP95LatencyMs: 1000,
      streamIteratorAgeMs: 120_000,
      sagaExecutionFailuresPerFiveMinutes: 1,
      sagaTimeoutsPerFiveMinutes: 20,
      lambdaThrottlesPerFiveMinutes: 20,
      sweeperCancellationsPerFiveMinutes: 3,
      sweeperFailuresPerFiveMinutes: 1,
      capacityWarningPercent: 80,
    },
    // Kept when the stack goes: the testers' accounts outlive a redeployment of staging.
    userPoolRemovalPolicy: RemovalPolicy.RETAIN,
  },
  prod: {
    ...shared,
    stage: 'prod',
    workflowType: 'STANDARD',
    logRetentionDays: 365,
    removalPolicy: RemovalPolicy.RETAIN,
    pointInTimeRecovery: true,
    tableDeletionProtection: true,
    terminationProtection: true,
    logLevel: 'WARN',
    sourceMaps: false,
    apiThrottle: {
      default: { rateLimit: 500, burstLimit: 1000 },
      routes: {
        [ORDER_ROUTE]: { rateLimit: 500, burstLimit: 1000 },
        // A flash sale: hundreds of thousands of reservations on a few items, in minutes.
        [RESERVATION_ROUTE]: { rateLimit: 2000, burstLimit: 4000 },
        ...backOffice({ rateLimit: 50, burstLimit: 100 }),
      },
    },
    // 4 APIs × 150 + 5 docs + the saga's step function 150 (three steps per order) + 1 projector × 20 + 40
    // + 2 sweepers = 817: an account at the default limit of 1,000 keeps the 100 unreserved that Lambda
    // requires. 2,000 reservations/s at ~50 ms take ~100.
    reservedConcurrency: { api: 150, docs: 5, projector: 20, publisher: 40, sagaStep: 150, sweeper: 1 },
    alarms: {
      api5xxPerFiveMinutes: 1,
      apiP95LatencyMs: 500,
      streamIteratorAgeMs: 60_000,
      sagaExecutionFailuresPerFiveMinutes: 1,
      sagaTimeoutsPerFiveMinutes: 10,
      lambdaThrottlesPerFiveMinutes: 10,
      sweeperCancellationsPerFiveMinutes: 1,
      sweeperFailuresPerFiveMinutes: 1,
      capacityWarningPercent: 70,
    },
    // Used only if config/stages.ts gives prod a user pool of its own rather than an external issuer.
    userPoolRemovalPolicy: RemovalPolicy.RETAIN,
  },
};

/**
 * Context keys that once carried deployment settings. A deployment that still
 * passes one is refused, rather than have the value ignored: it lives in
 * config/stages.ts now, so that a redeploy cannot forget it.
 */
const MOVED_TO_SETTINGS: Readonly<Record<string, string>> = {
  jwtIssuer: 'identity.issuer',
  jwtAudience: 'identity.audience',
  alarmEmail: 'alarmEmail',
  shopCallbackUrls: 'identity.callbackUrls',
  shopLogoutUrls: 'identity.logoutUrls',
};

/**
 * The stage's config: its reviewed shape, the deployment's settings
 * (`settings`, config/stages.ts, checked: staging and prod refuse a
 * placeholder or a missing value), and the few overrides of timings that
 * tests and local runs take from CDK context.
 */
export function stageConfig(
  stage: string,
  context: (key: string) => unknown = () => undefined,
  settings: StageSettingsFile = STAGE_SETTINGS,
): StageConfig {
  if (!(STAGES as readonly string[]).includes(stage)) {
    throw new Error(`unknown stage "${stage}": use one of ${STAGES.join(', ')}`);
  }
  for (const [key, path] of Object.entries(MOVED_TO_SETTINGS)) {
    if (context(key) !== undefined)
      throw new Error(
        `context ${key} is no longer read: set ${stage}.${path} in ${STAGE_SETTINGS_FILE} (and commit it)`,
      );
  }
  const deployment = checkedSettings(stage, settings);
  const base = STAGE_CONFIGS[stage as StageName];
  const seconds = (key: string, fallback: Duration) => {
    const value = context(key);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1)
      throw new Error(`context ${key} must be a whole number of seconds ≥ 1`);
    return Duration.seconds(n);
  };
  const whole = (key: string, fallback: number) => {
    const value = context(key);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new Error(`context ${key} must be a whole number ≥ 1`);
    return n;
  };
  const { userPoolRemovalPolicy, ...shape } = base;
  const { identity, account, region, tags } = deployment;
  return {
    ...shape,
    sagaDeadline: seconds('sagaDeadlineSeconds', base.sagaDeadline),
    reservationTtl: seconds('reservationTtlSeconds', base.reservationTtl),
    sweeperGrace: seconds('sweeperGraceSeconds', base.sweeperGrace),
    holdLimitPerCaller: whole('holdLimitPerCaller', base.holdLimitPerCaller),
    externalIssuer:
      identity.kind === 'external'
        ? { issuer: identity.issuer, audience: identity.audience.map((a) => a.trim()).filter(Boolean) }
        : undefined,
    userPool: {
      callbackUrls: identity.kind === 'userPool' ? identity.callbackUrls : [],
      logoutUrls: identity.kind === 'userPool' ? identity.logoutUrls : [],
      removalPolicy: userPoolRemovalPolicy,
    },
    alarmEmail: deployment.alarmEmail,
    env: account !== undefined && region !== undefined ? { account, region } : undefined,
    tags: {
      project: PROJECT_TAG,
      stage,
      ...(tags.owner ? { owner: tags.owner } : {}),
      ...(tags.costCentre ? { 'cost-centre': tags.costCentre } : {}),
    },
  };
}
