import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { retryWithin } from './retries';

/**
 * One Logger and Metrics per function (no Tracer: see
 * docs/decisions/0007-no-xray-sdk-in-bundles.md). The service name and namespace
 * come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE set by the
 * service construct, so handlers never repeat them.
 */
export const logger = new Logger();
export const metrics = new Metrics();

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
