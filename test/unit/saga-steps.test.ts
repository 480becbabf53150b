import { SagaError, StepError, sagaSteps, stepErrorOf } from '../../functions/saga/steps';
import { ConcurrencyError } from '../../functions/shared/errors';

const awsError = (name: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${name} happened`), { name, ...extra });

describe('a saga step’s errors are named by the contract', () => {
  test.each([
    ['throttling', awsError('ProvisionedThroughputExceededException')],
    ['SDK-retryable', awsError('SomethingNew', { $retryable: {} })],
    [
      'a lost transaction race',
      awsError('TransactionCanceledException', {
        CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
      }),
    ],
    ['a connection reset', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
    ['a conflict retryOnConflict gave up on', new ConcurrencyError(['ord_1'])],
  ])('%s is transient', (_, error) => {
    expect(stepErrorOf(error).name).toBe('TransientError');
  });

  test.each([
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
    [
      'a failed condition',
      awsError('TransactionCanceledException', { CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] }),
    ],
    ['a validation error', awsError('ValidationException')],
    ['a thrown string', 'nope'],
  ])('%s is unexpected (StepFailed), keeping what it was in the message', (_, error) => {
    const named = stepErrorOf(error);
    expect(named.name).toBe('StepFailed');
    expect(named.cause).toBe(error);
  });

  test('a business outcome keeps its name', () => {
    const outcome = new SagaError('OutOfStock', 'none left');
    expect(stepErrorOf(outcome)).toBe(outcome);
  });
});

describe('the step router', () => {
  const input = {
    action: 'capture',
    orderId: 'ord_1',
    customerId: 'cus_1',
    items: [{ productId: 'prd_1', quantity: 1, priceCents: 100 }],
    totalCents: 100,
    deadline: '2026-01-01T00:00:30.000Z',
  };
  const router = sagaSteps({ capture: async () => ({ paymentId: 'pay_1' }) });

  test('runs the step the input names', async () => {
    await expect(router(input)).resolves.toEqual({ paymentId: 'pay_1' });
  });

  test.each([
    ['a missing field', { ...input, orderId: undefined }],
    ['a wrong type', { ...input, totalCents: '100' }],
    ['an unknown action', { ...input, action: 'teleport' }],
    ['a reserve without the execution that claims the order', { ...input, action: 'reserve' }],
  ])('refuses %s as StepFailed before doing anything', async (_, bad) => {
    const failure = router(bad).catch((e: unknown) => e);
    await expect(failure).resolves.toBeInstanceOf(StepError);
    expect(((await failure) as Error).name).toBe('StepFailed');
  });

  test('an action this function does not serve is StepFailed', async () => {
    await expect(router({ ...input, action: 'confirm' })).rejects.toMatchObject({ name: 'StepFailed' });
  });
});
