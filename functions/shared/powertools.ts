import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';

/**
 * One Logger, Metrics and Tracer per function. The service name and namespace
 * come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE set by the
 * service construct, so handlers never repeat them.
 */
export const logger = new Logger();
export const metrics = new Metrics();
export const tracer = new Tracer();
