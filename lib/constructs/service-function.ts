import { join } from 'node:path';
import {
  Duration,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  type aws_sqs as sqs,
} from 'aws-cdk-lib';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { type BundlingOptions, LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import { acknowledgeCheckov, LOG_GROUP_KEY_REASON } from '../checkov';
import { acknowledgeNag } from '../nag';
import { type Watchlist, watchLabel } from '../observability/watchlist';
import type { FunctionKind, StageConfig } from '../stage-config';

const FUNCTIONS_DIR = join(__dirname, '..', '..', 'functions');
/** What the bundles take for the SDK's default credential chain: the environment's credentials alone. */
const LAMBDA_CREDENTIALS = join(FUNCTIONS_DIR, 'shared', 'lambda-credentials.ts');
/** What the bundles take for the SDK's event streams, which no operation they call has. */
const NO_EVENT_STREAMS = join(FUNCTIONS_DIR, 'shared', 'no-event-streams.ts');
/** What the bundles take for DynamoDB's endpoint discovery, which no command of the pinned SDK uses. */
const NO_ENDPOINT_DISCOVERY = join(FUNCTIONS_DIR, 'shared', 'no-endpoint-discovery.ts');
/** `require` for the CommonJS code in an ES module bundle (esbuild's own shim throws for Node's modules). */
const BUNDLE_BANNER =
  "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

export interface ServiceFunctionProps {
  /** Path under `functions/`, e.g. `accounts/handlers/api.ts`. */
  readonly entry: string;
  readonly service: string;
  /** What the function does; the stage reserves concurrency by kind. */
  readonly kind: FunctionKind;
  readonly config: StageConfig;
  /** Where the function is registered for the alarms and the dashboard. */
  readonly watchlist: Watchlist;
  /** Written by the seams of the modules the function uses (functions/<module>/seams.ts). */
  readonly environment?: Record<string, string>;
  readonly timeout?: Duration;
  readonly memorySize?: number;
  readonly description: string;
  /**
   * Where an asynchronous invocation (a scheduled rule's) goes when its two
   * retries are spent: a Lambda destination, whose record names the function
   * and carries the payload, so that the redrive script can invoke it again.
   */
  readonly onFailure?: sqs.IQueue;
}

/**
 * Every Lambda of the platform: Node.js 22 on arm64, bundled by the local
 * esbuild (no Docker), Powertools configured for its service, JSON logs with
 * the stage's retention, active tracing, and a role of its own that may write
 * to its own log group and nothing else until the service grants it more.
 */
export class ServiceFunction extends Construct {
  readonly fn: NodejsFunction;
  /** Its entry under `functions/`. */
  readonly entry: string;
  readonly watchlist: Watchlist;
  readonly config: StageConfig;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    this.entry = props.entry;
    this.watchlist = props.watchlist;
    this.config = props.config;
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.config.logRetentionDays as logs.RetentionDays,
      removalPolicy: props.config.removalPolicy,
    });
    // Instead of AWSLambdaBasicExecutionRole, whose log permissions cover every log group of the account.
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.description} (${props.config.stage})`,
    });
    logGroup.grant(role, 'logs:CreateLogStream', 'logs:PutLogEvents');

    const debugBundles = this.node.tryGetContext('debugBundles') === 'true';
    this.fn = new NodejsFunction(this, 'Function', {
      entry: join(FUNCTIONS_DIR, props.entry),
      handler: 'handler',
      description: props.description,
      role,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      reservedConcurrentExecutions: props.config.reservedConcurrency[props.kind],
      ...(props.onFailure ? { onFailure: new SqsDestination(props.onFailure), retryAttempts: 2 } : {}),
      environment: {
        POWERTOOLS_SERVICE_NAME: props.service,
        // One namespace per stage, so that two stages in one account never add up on a dashboard or alarm.
        POWERTOOLS_METRICS_NAMESPACE: metricsNamespace(props.config),
        POWERTOOLS_LOG_LEVEL: props.config.logLevel,
        STAGE: props.config.stage,
        ...(debugBundles ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
        ...props.environment,
      },
      bundling: bundlingOf(debugBundles, props.config.sourceMaps),
    });

    acknowledgeCheckov(logGroup, 'CKV_AWS_158', LOG_GROUP_KEY_REASON);
    acknowledgeCheckov(
      this.fn,
      'CKV_AWS_116',
      'failures have their own path: API Gateway and Step Functions invoke synchronously and see the error, a stream mapping sends what fails to its on-failure queue, a scheduled invocation to its on-failure destination; a Lambda DLQ (asynchronous invocations only) would add nothing',
    );
    acknowledgeCheckov(
      this.fn,
      'CKV_AWS_117',
      'no VPC: the function reaches only AWS APIs (DynamoDB, EventBridge, Step Functions) over TLS, authorized by its role; a VPC would add NAT or interface endpoints (a cost at idle) and nothing to reach inside it',
    );
    acknowledgeCheckov(
      this.fn,
      'CKV_AWS_173',
      'the environment holds resource names and settings, no secrets; Lambda encrypts it at rest with its service key',
    );
    if (props.config.reservedConcurrency[props.kind] === undefined) {
      acknowledgeCheckov(
        this.fn,
        'CKV_AWS_115',
        `the ${props.config.stage} stage reserves no concurrency for ${props.kind} functions (the account's unreserved pool and the API's throttle bound them); the stages that serve traffic reserve it per kind (stage-config.ts)`,
      );
    }
    acknowledgeNag(
      this,
      'IAM5[Resource::*]',
      'X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) support no resource-level permissions',
    );
    acknowledgeNag(
      this,
      'L1',
      'Node.js 22 is pinned: the bundles target node22 and were tested on it; a runtime upgrade is a deliberate change',
    );
    props.watchlist.addFunction(watchLabel(scope, id), this.fn);
  }
}

/** The CloudWatch namespace of the platform's own (EMF) metrics on a stage. */
export const metricsNamespace = (config: StageConfig) => `Commerce/${config.stage}`;

/** How esbuild bundles every function (no Docker): see each option. */
function bundlingOf(debugBundles: boolean, sourceMaps: boolean): BundlingOptions {
  return {
    // A debug build (`-c debugBundles=true`; `npm start -- --debug` makes one) is readable and
    // mapped to the sources, so that breakpoints bind and stack traces name our files.
    minify: !debugBundles,
    // Names are not kept: that took 6% of every bundle (20 KB). A stack trace's positions map to
    // the sources offline with the dev stage's index.mjs.map, which fits every stage's bundle of the
    // same commit (the code is the same; docs/operations.md). Not --enable-source-maps at run time:
    // it makes every thrown error (a lost optimistic-concurrency race, a 409) expensive on the hot path.
    keepNames: false,
    // A stage that keeps source maps (dev) ships each bundle's map beside it, for mapping a stack
    // trace to the sources; prod does not (StageConfig.sourceMaps).
    sourceMap: debugBundles || sourceMaps,
    // The map points at the files themselves (relative to the bundle), for a debugger to open.
    sourcesContent: false,
    logLevel: LogLevel.ERROR,
    target: 'node22',
    // ES modules (index.mjs): esbuild drops what a function does not import from the packages'
    // ES module builds (the AWS SDK's above all), which their CommonJS builds do not let it do.
    format: OutputFormat.ESM,
    mainFields: ['module', 'main'],
    // A CommonJS package bundled into the ES module may still require Node's own modules.
    banner: BUNDLE_BANNER,
    // The SDK is bundled, pinned to the version the tests ran with.
    externalModules: [],
    esbuildArgs: {
      // The clients' default credential chain, cut to its first link; no event streams and no
      // endpoint discovery, which nothing the functions call uses (see each module).
      '--alias': [
        `@aws-sdk/credential-provider-node=${LAMBDA_CREDENTIALS}`,
        `@smithy/core/event-streams=${NO_EVENT_STREAMS}`,
        `@aws-sdk/middleware-endpoint-discovery=${NO_ENDPOINT_DISCOVERY}`,
      ],
    },
  };
}
