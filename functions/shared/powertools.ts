import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { Context } from 'aws-lambda';
import { retryWithin } from './retries';

/**
 * One Logger, Metrics and Tracer per function. The service name and namespace
 * come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE set by the
 * service construct, so handlers never repeat them.
 */
export const logger = new Logger();
export const metrics = new Metrics();

let tracer: Tracer | undefined;

/**
 * What every handler does first with its Lambda context: every log line of
 * the invocation then carries the function's name, the request id and
 * whether it was a cold start (Powertools' Lambda context); the first
 * invocation of a sandbox emits the `ColdStart` metric; the SDK's retries are
 * bounded by the invocation's timeout (see retryWithin). Without a context (a
 * handler called directly, in a test) only the metric and the retries apply.
 */
export function startInvocation(context: Context | undefined): void {
  if (context) logger.addContext(context);
  metrics.captureColdStartMetric(context?.functionName);
  retryWithin(context);
}

/**
 * The client, with X-Ray subsegments for its calls where tracing is on.
 *
 * The tracer is loaded only then: it brings aws-xray-sdk-core, whose
 * cls-hooked context tracking puts an async hook on every promise. Profiled
 * in the local cloud (where tracing is off, having no X-Ray daemon), that hook
 * took a fifth of a busy sandbox's CPU.
 */
export function traced<Client extends object>(client: Client): Client {
  if (process.env.POWERTOOLS_TRACE_ENABLED === 'false') return client;
  // A require, not an import, so that the bundle initializes the tracer only on this path.
  const { Tracer: TracerClass } = require('@aws-lambda-powertools/tracer') as {
    Tracer: new () => Tracer;
  };
  tracer ??= new TracerClass();
  return tracer.captureAWSv3Client(client);
}
