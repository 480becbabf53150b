import { aws_cloudwatch as cloudwatch, Duration } from 'aws-cdk-lib';
import { INVENTORY_METRICS, INVENTORY_SERVICE } from '../../functions/inventory/seams';
import { SAGA_METRICS, SAGA_SERVICE } from '../../functions/saga/seams';
import { metricsNamespace } from '../constructs/service-function';
import type { StageConfig } from '../stage-config';

/** The period of every graph and alarm. */
export const FIVE_MINUTES = Duration.minutes(5);

/**
 * The saga's EMF metrics (functions/saga/seams.ts) on a stage, one by its
 * name: its functions emit them under the saga's service in the stage's namespace.
 */
export const sagaMetrics =
  (config: StageConfig) =>
  (name: keyof typeof SAGA_METRICS, dimensions: Record<string, string> = {}, statistic = 'Sum') =>
    new cloudwatch.Metric({
      namespace: metricsNamespace(config),
      metricName: SAGA_METRICS[name],
      dimensionsMap: { service: SAGA_SERVICE, ...dimensions },
      statistic,
      period: FIVE_MINUTES,
    });

/** The inventory's EMF metrics (functions/inventory/seams.ts) on a stage, one by its name. */
export const inventoryMetrics = (config: StageConfig) => (name: keyof typeof INVENTORY_METRICS) =>
  new cloudwatch.Metric({
    namespace: metricsNamespace(config),
    metricName: INVENTORY_METRICS[name],
    dimensionsMap: { service: INVENTORY_SERVICE },
    statistic: 'Sum',
    period: FIVE_MINUTES,
  });
