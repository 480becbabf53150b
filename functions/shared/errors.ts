/** A failure the client caused; the HTTP edge answers it in the contract's error shape. */
export class ClientError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: readonly unknown[] = [],
  ) {
    super(message);
    this.name = 'ClientError';
  }
}

export const validationError = (message: string, details: readonly unknown[] = []) =>
  new ClientError(400, 'VALIDATION_ERROR', message, details);

/** The caller may not do this: a field only an admin may set, from a shop token. */
export const forbidden = (message: string, details: readonly unknown[] = []) =>
  new ClientError(403, 'FORBIDDEN', message, details);

export const notFound = (what: string, id: string) =>
  new ClientError(404, 'NOT_FOUND', `${what} ${id} was not found`, [{ field: what, id }]);

export const insufficientStock = (productId: string, requested: number, available: number) =>
  new ClientError(
    409,
    'INSUFFICIENT_STOCK',
    `product ${productId} has ${available} available, ${requested} requested`,
    [{ productId, requested, available }],
  );

/** Another writer appended to the aggregate first; safe to retry by reloading. */
export class ConcurrencyError extends Error {
  constructor(
    readonly aggregateIds: readonly string[],
    /**
     * Those whose item exists already (its condition failed), as opposed to a transaction conflict
     * (another transaction writing the item now, which may yet fail): only an item that exists tells
     * a creating command that its request was made before.
     */
    readonly existing: readonly string[] = aggregateIds,
  ) {
    super(`concurrent append to ${aggregateIds.join(', ')}`);
    this.name = 'ConcurrencyError';
  }
}

/** Raised by a creating command that finds its aggregate already made: a repeat of its request (see `idempotentCreation`). */
export class AlreadyCreated extends Error {
  constructor(readonly aggregateId: string) {
    super(`${aggregateId} exists already`);
    this.name = 'AlreadyCreated';
  }
}

/**
 * AWS refusing a call for capacity (throttling, a hot key, a transaction
 * holding the item) after the SDK's own retries, or a command that lost every
 * retry to concurrent writers: not a fault of the request, and the refused
 * write did not happen (a use case writes once, last), so the request is
 * answered `429 THROTTLED` and may be sent again.
 */
export const CAPACITY_ERRORS: ReadonlySet<string> = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
]);
const CAPACITY_CANCELLATIONS = new Set([
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'TransactionConflict',
]);

export function isCapacityRefusal(error: unknown): boolean {
  if (error instanceof ConcurrencyError) return true;
  const { name, CancellationReasons } = error as {
    name?: string;
    CancellationReasons?: readonly { Code?: string }[];
  };
  if (name !== undefined && CAPACITY_ERRORS.has(name)) return true;
  // A transaction cancelled for capacity only (a failed condition would have been a ConcurrencyError).
  return (
    name === 'TransactionCanceledException' &&
    (CancellationReasons ?? []).some((r) => r.Code !== undefined && CAPACITY_CANCELLATIONS.has(r.Code))
  );
}

/** The contract's answer to a refusal for capacity: try again in a second. */
export const throttled = (message: string) => new ClientError(429, 'THROTTLED', message);

/**
 * What a log line or a metric may say of an error: its name, and its code
 * where it has one of its own (a socket's `ECONNREFUSED`), never its
 * message, which may quote what the failed call carried.
 */
export function errorName(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const { code } = error as { code?: unknown };
  return typeof code === 'string' && code !== error.name ? `${error.name} (${code})` : error.name;
}
