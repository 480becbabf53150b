import { join } from 'node:path';
import { type Assembly, REGION, type Resolve, resourcesOfType } from '../assembly';

export interface FunctionSpec {
  readonly logicalId: string;
  readonly codeDir: string;
  readonly handler: string;
  readonly timeoutMs: number;
  readonly memoryMb: number;
  /** The function's reserved concurrency: invocations beyond it are throttled, as on Lambda. */
  readonly reservedConcurrency?: number;
  readonly environment: Record<string, string>;
}

/**
 * The flags of a function's NODE_OPTIONS (e.g. `--enable-source-maps` in a debug build), for its
 * sandboxes' execArgv. A flag a worker thread cannot take fails the sandbox's start, naming it.
 */
export const nodeOptions = (value: string | undefined): string[] => value?.split(/\s+/).filter(Boolean) ?? [];

/** Reads every AWS::Lambda::Function of the template into what a sandbox needs. */
export function functionSpecs(
  assembly: Assembly,
  resolve: Resolve,
  extraEnvironment: Record<string, string>,
) {
  return resourcesOfType(assembly.template, 'AWS::Lambda::Function').map(([logicalId, r]): FunctionSpec => {
    const p = r.Properties ?? {};
    const assetPath = r.Metadata?.['aws:asset:path'];
    if (typeof assetPath !== 'string')
      throw new Error(`function ${logicalId} has no bundled asset in the assembly`);
    const variables = resolve(
      (p.Environment as { Variables?: unknown } | undefined)?.Variables ?? {},
    ) as Record<string, unknown>;
    const memoryMb = Number(p.MemorySize ?? 128);
    return {
      logicalId,
      codeDir: join(assembly.dir, assetPath),
      handler: String(p.Handler ?? 'index.handler'),
      timeoutMs: Number(p.Timeout ?? 3) * 1000,
      memoryMb,
      ...(p.ReservedConcurrentExecutions === undefined
        ? {}
        : { reservedConcurrency: Number(p.ReservedConcurrentExecutions) }),
      environment: {
        ...Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, String(v)])),
        AWS_REGION: REGION,
        AWS_DEFAULT_REGION: REGION,
        AWS_LAMBDA_FUNCTION_NAME: logicalId,
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
        // Lambda's own: Powertools tells a cold start (its ColdStart metric, `cold_start` on log lines) by it.
        AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
        AWS_EXECUTION_ENV: `AWS_Lambda_${String(p.Runtime ?? 'nodejs22.x')}`,
        LAMBDA_TASK_ROOT: join(assembly.dir, assetPath),
        ...extraEnvironment,
      },
    };
  });
}
