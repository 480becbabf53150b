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
