/**
 * The template's DynamoDB-stream event source mappings, as the stream
 * pollers (streams.ts) run them, and Lambda's event filtering on their
 * records.
 */
import { type Assembly, type Resolve, resourcesOfType } from './assembly';
import { type EventPattern, matchesPattern, validatePattern } from './eventbridge/pattern';
import type { LambdaRuntime } from './lambda/runtime';
import type { LocalTable } from './tables';

export interface MappingSpec {
  readonly logicalId: string;
  readonly functionId: string;
  readonly tableLogicalId: string;
  readonly streamArn: string;
  readonly batchSize: number;
  /** MaximumBatchingWindowInSeconds, in ms: how long records are gathered before a batch is delivered. */
  readonly batchingWindowMs: number;
  readonly maximumRetryAttempts: number;
  readonly bisectOnError: boolean;
  readonly reportBatchItemFailures: boolean;
  readonly onFailureArn?: string;
  readonly enabled: boolean;
  /** The mapping's FilterCriteria patterns; empty: every record is delivered. */
  readonly filters: readonly EventPattern[];
}

/**
 * Lambda's event filtering on a stream record: the record (as the function
 * would get it, `dynamodb.NewImage` in DynamoDB JSON) is delivered if it
 * matches any of the patterns, which use the EventBridge pattern syntax; with
 * no patterns, every record is.
 */
export const passesFilters = (filters: readonly EventPattern[], record: Record<string, unknown>): boolean =>
  filters.length === 0 || filters.some((pattern) => matchesPattern(pattern, record));

/** A mapping's `FilterCriteria.Filters[].Pattern` (JSON strings), parsed and checked. */
export function filterPatterns(criteria: unknown, logicalId: string): EventPattern[] {
  const filters = (criteria as { Filters?: { Pattern?: unknown }[] } | undefined)?.Filters ?? [];
  return filters.map(({ Pattern }, index) => {
    try {
      const pattern = JSON.parse(String(Pattern)) as EventPattern;
      validatePattern(pattern);
      return pattern;
    } catch (error) {
      throw new Error(`event source mapping ${logicalId}: filter ${index}: ${(error as Error).message}`);
    }
  });
}

/** Reads every DynamoDB-stream AWS::Lambda::EventSourceMapping of the template. */
export function mappingSpecs(
  assembly: Assembly,
  resolve: Resolve,
  tables: ReadonlyMap<string, LocalTable>,
  runtime: LambdaRuntime,
): MappingSpec[] {
  return resourcesOfType(assembly.template, 'AWS::Lambda::EventSourceMapping').map(([logicalId, r]) => {
    const raw = r.Properties ?? {};
    const source = raw.EventSourceArn as { 'Fn::GetAtt'?: [string, string] } | undefined;
    const tableLogicalId = source?.['Fn::GetAtt']?.[0];
    const table = tableLogicalId ? tables.get(tableLogicalId) : undefined;
    if (!table?.streamArn)
      throw new Error(`event source mapping ${logicalId} is not on a local table stream`);
    const p = resolve(raw) as Record<string, unknown>;
    const destination = (p.DestinationConfig as { OnFailure?: { Destination?: string } } | undefined)
      ?.OnFailure?.Destination;
    return {
      logicalId,
      functionId: runtime.functionIdOf(String(p.FunctionName)),
      tableLogicalId: tableLogicalId!,
      streamArn: table.streamArn,
      batchSize: Number(p.BatchSize ?? 100),
      batchingWindowMs: Number(p.MaximumBatchingWindowInSeconds ?? 0) * 1000,
      // CloudFormation's -1 (or absent) means retry until the record expires; locally, bounded.
      maximumRetryAttempts: p.MaximumRetryAttempts === undefined ? 10_000 : Number(p.MaximumRetryAttempts),
      bisectOnError: p.BisectBatchOnFunctionError === true,
      reportBatchItemFailures: ((p.FunctionResponseTypes as string[] | undefined) ?? []).includes(
        'ReportBatchItemFailures',
      ),
      ...(destination ? { onFailureArn: destination } : {}),
      enabled: p.Enabled !== false,
      filters: filterPatterns(p.FilterCriteria, logicalId),
    };
  });
}
