import {
  Duration,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  type aws_sqs as sqs,
} from 'aws-cdk-lib';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { Construct } from 'constructs';
import { acknowledgeCheckov, LOG_GROUP_KEY_REASON } from '../checkov';
import { acknowledgeNag } from '../nag';
import { type Watchlist, watchLabel } from '../observability/watchlist';
import type { FunctionKind, StageConfig } from '../stage-config';
import { bundledCode } from './bundles';

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
  readonly fn: lambda.Function;
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
    this.fn = new lambda.Function(this, 'Function', {
      code: bundledCode(this, props.entry, { debug: debugBundles, sourceMaps: props.config.sourceMaps }),
      handler: 'index.handler',
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
