/** The error of an invocation refused for the function's concurrency, named as Step Functions sees it. */
export const THROTTLED_ERROR = 'Lambda.TooManyRequestsException';

/** What a failed invocation reports, as Lambda does (`errorType`, `errorMessage`). */
export class FunctionError extends Error {
  constructor(
    readonly functionName: string,
    readonly errorType: string,
    errorMessage: string,
    readonly trace: readonly string[] = [],
  ) {
    super(errorMessage);
    this.name = 'FunctionError';
  }
}

/** An invocation refused because it waited its bound for a sandbox (see `LambdaRuntime.invoke`): it never ran. */
export class QueueWaitExceeded extends FunctionError {
  constructor(functionName: string, maxWaitMs: number) {
    super(functionName, THROTTLED_ERROR, `no sandbox free within ${maxWaitMs} ms`);
  }
}
