import { join } from 'node:path';
import { Duration, aws_lambda as lambda, aws_logs as logs } from 'aws-cdk-lib';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import type { StageConfig } from '../stage-config';

const FUNCTIONS_DIR = join(__dirname, '..', '..', 'functions');

export interface ServiceFunctionProps {
  /** Path under `functions/`, e.g. `accounts/handlers/api.ts`. */
  readonly entry: string;
  readonly service: string;
  readonly config: StageConfig;
  readonly environment?: Record<string, string>;
  readonly timeout?: Duration;
  readonly memorySize?: number;
  readonly description: string;
}

/**
 * Every Lambda of the platform: Node.js 22 on arm64, bundled by the local
 * esbuild (no Docker), Powertools configured for its service, JSON logs with
 * the stage's retention, active tracing.
 */
export class ServiceFunction extends Construct {
  readonly fn: NodejsFunction;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.config.logRetentionDays as logs.RetentionDays,
      removalPolicy: props.config.removalPolicy,
    });
    this.fn = new NodejsFunction(this, 'Function', {
      entry: join(FUNCTIONS_DIR, props.entry),
      handler: 'handler',
      description: props.description,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      environment: {
        POWERTOOLS_SERVICE_NAME: props.service,
        POWERTOOLS_METRICS_NAMESPACE: 'Commerce',
        POWERTOOLS_LOG_LEVEL: props.config.logLevel,
        STAGE: props.config.stage,
        ...props.environment,
      },
      bundling: {
        minify: true,
        // Names kept instead of source maps: --enable-source-maps makes every thrown error
        // (a lost optimistic-concurrency race, a 409) expensive on the hot path.
        keepNames: true,
        sourceMap: false,
        logLevel: LogLevel.ERROR,
        target: 'node22',
        format: OutputFormat.CJS,
        // The SDK is bundled, pinned to the version the tests ran with.
        externalModules: [],
      },
    });
  }
}
