import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  REASON_OF,
  STEP_ERRORS,
  STEP_INPUTS,
  STEP_OUTCOMES,
  STEP_OUTPUTS,
  type StepAction,
  TRANSIENT_ERROR,
  UNEXPECTED_ERROR,
} from '../../functions/saga/contract';
import { KEY } from '../../functions/shared/event-store';

/** The saga's state machine, as the CDK loads it (`DefinitionBody.fromFile`). */
interface Retrier {
  ErrorEquals: string[];
  MaxAttempts?: number;
}
interface Catcher {
  ErrorEquals: string[];
  Next: string;
}
interface State {
  Type: string;
  Resource?: string;
  Default?: string;
  Choices?: { Variable: string; Next: string; IsPresent?: boolean; StringEqualsPath?: string }[];
  Next?: string;
  Seconds?: number;
  Parameters?: {
    FunctionName?: string;
    Payload?: Record<string, unknown>;
    TableName?: string;
    Key?: Record<string, Record<string, string>>;
    ConsistentRead?: boolean;
  };
  ResultPath?: string | null;
  ResultSelector?: Record<string, string>;
  Result?: { reason?: string };
  Retry?: Retrier[];
  Catch?: Catcher[];
}
const asl = JSON.parse(
  readFileSync(join(__dirname, '..', '..', 'statemachines', 'order-saga.asl.json'), 'utf8'),
) as { StartAt: string; States: Record<string, State> };
/** The steps: the Tasks that invoke the saga's step function (ClaimedAlready reads DynamoDB itself, see below). */
const tasks = Object.entries(asl.States).filter(
  ([, s]) => s.Type === 'Task' && s.Resource === 'arn:aws:states:::lambda:invoke',
);
/** A definition substitution as the ASL file writes it (`${Name}`), replaced by CDK at synth. */
const substitution = (name: string) => `\${${name}}`;
const actionOf = (state: State) => state.Parameters?.Payload?.action as StepAction;

/** Errors that AWS itself raises around a Lambda Task: the only names besides the contract's. */
const AWS_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
  'Lambda.Unknown',
  'States.Timeout',
  'States.ALL',
  'Sandbox.Timedout',
  'Runtime.ExitError',
];

/** Evaluates the plain paths the saga uses (`$.a.b`, `$$.Execution.Id`) against a state's input. */
function valueAt(path: string, input: unknown, context: unknown): unknown {
  const [root, ...keys] = path.split('.');
  let value = root === '$$' ? context : input;
  for (const key of keys) value = (value as Record<string, unknown> | undefined)?.[key];
  return value;
}

function payloadFor(state: State, input: unknown, context: unknown) {
  return Object.fromEntries(
    Object.entries(state.Parameters?.Payload ?? {}).map(([key, value]) =>
      key.endsWith('.$') ? [key.slice(0, -2), valueAt(String(value), input, context)] : [key, value],
    ),
  );
}

/** The input every Task sees on the way to confirmation: the OrderPlaced event and the results before it. */
const orderPlaced = {
  detail: {
    type: 'OrderPlaced',
    correlationId: 'corr-1',
    data: {
      orderId: 'ord_1',
      customerId: 'cus_1',
      items: [{ productId: 'prd_1', quantity: 2, priceCents: 500 }],
      totalCents: 1000,
      deadline: '2026-01-01T00:00:30.000Z',
      placedAt: '2026-01-01T00:00:00.000Z',
    },
  },
};
const reserved = {
  proceed: true,
  order: {
    state: { orderId: 'ord_1', status: 'PENDING', items: orderPlaced.detail.data.items },
    version: 2,
  },
  shards: [
    {
      productId: 'prd_1',
      shard: 0,
      version: 3,
      state: { available: 8, reserved: 2, sold: 0, received: 10 },
    },
  ],
  customer: {
    state: {
      customerId: 'cus_1',
      name: 'Ada',
      email: 'ada@example.com',
      creditLimitCents: 100_000,
      capturedCents: 0,
      status: 'ACTIVE',
      createdAt: '2026-01-01T00:00:00.000Z',
    },
    version: 1,
    readAt: '2026-01-01T00:00:01.000Z',
  },
};
const stateInput = {
  ...orderPlaced,
  reservation: { result: reserved },
  payment: { result: { paymentId: 'pay_1' } },
  cancellation: { reason: 'TIMEOUT' },
};
const context = { Execution: { Id: 'arn:aws:states:us-east-1:000000000000:execution:saga:ord_1' } };

describe('an execution not started by the request reads the claim before invoking anything', () => {
  const start = asl.States.StartedByTheRequest!;

  test('the request’s execution (named after the order) goes straight to ReserveStock; any other reads first', () => {
    expect(asl.StartAt).toBe('StartedByTheRequest');
    expect(start.Choices).toEqual([
      { Variable: '$$.Execution.Name', StringEqualsPath: '$.detail.data.orderId', Next: 'ReserveStock' },
    ]);
    expect(start.Default).toBe('ClaimedAlready');
  });

  test.each(['ClaimedAlready'])(
    '%s reads the order’s second event item, where a claim (or a cancellation) lands, consistently',
    (name) => {
      const read = asl.States[name]!;
      expect(read.Resource).toBe('arn:aws:states:::dynamodb:getItem');
      expect(read.Parameters?.TableName).toBe(substitution('OrdersTable'));
      expect(read.Parameters?.ConsistentRead).toBe(true);
      // The event store's key (functions/shared/event-store.ts): the aggregate id and the version.
      expect(Object.keys(read.Parameters?.Key ?? {}).sort()).toEqual([KEY.partition, KEY.sort].sort());
      expect(valueAt(read.Parameters!.Key![KEY.partition]!['S.$']!, stateInput, context)).toBe('ord_1');
      expect(read.Parameters!.Key![KEY.sort]).toEqual({ N: '2' });
      // A read that keeps failing leaves the decision to ReserveStock's own claim.
      expect(read.Catch).toEqual([
        expect.objectContaining({ ErrorEquals: ['States.ALL'], Next: 'ReserveStock' }),
      ]);
    },
  );

  test('a claim found ends the execution; none leaves it at once to ReserveStock, whose claim decides', () => {
    const choiceAfter = (read: string) => asl.States[asl.States[read]!.Next!]!;
    expect(choiceAfter('ClaimedAlready').Choices).toEqual([
      {
        Variable: `$.${asl.States.ClaimedAlready!.ResultPath!.slice(2)}.Item`,
        IsPresent: true,
        Next: 'AlreadyRunningElsewhere',
      },
    ]);
    expect(choiceAfter('ClaimedAlready').Default).toBe('ReserveStock');
    // No pauses: on AWS a missing claim means the request's start failed, and waiting only delays the saga.
    expect(Object.values(asl.States).filter((state) => state.Type === 'Wait')).toEqual([]);
    expect(asl.States.AlreadyRunningElsewhere!.Type).toBe('Succeed');
  });
});

describe('the saga state machine keeps the steps’ contract', () => {
  test('every Task invokes the saga’s step function with an action the contract knows', () => {
    expect(tasks.map(([name]) => name).sort()).toEqual([
      'CancelOrder',
      'CapturePayment',
      'ConfirmOrder',
      'ReserveStock',
    ]);
    for (const [, state] of tasks) {
      expect(state.Parameters?.FunctionName).toBe(substitution('SagaStepsFunction'));
      expect(Object.keys(STEP_INPUTS)).toContain(actionOf(state));
    }
  });

  test.each(tasks)('%s sends an input its step accepts, and nothing the step does not read', (_, state) => {
    const schema = STEP_INPUTS[actionOf(state)];
    const payload = payloadFor(state, stateInput, context);
    expect(schema.safeParse(payload).error?.issues ?? []).toEqual([]);
    expect(Object.keys(payload).sort()).toEqual(
      Object.keys(schema.shape)
        .filter(
          (k) => k in payload || !schema.shape[k as keyof typeof schema.shape].safeParse(undefined).success,
        )
        .sort(),
    );
  });

  test('what ReserveStock answers is what CapturePayment and ConfirmOrder are handed', () => {
    expect(STEP_OUTPUTS.reserve.safeParse(reserved).success).toBe(true);
    const capture = STEP_INPUTS.capture.parse(payloadFor(asl.States.CapturePayment!, stateInput, context));
    expect(capture.customer).toEqual(reserved.customer);
    const confirm = asl.States.ConfirmOrder!;
    const payload = STEP_INPUTS.confirm.parse(payloadFor(confirm, stateInput, context));
    expect(payload.order).toEqual(reserved.order);
    expect(payload.shards).toEqual(reserved.shards);
    // The results land where the next states read them.
    expect(asl.States.ReserveStock!.ResultPath).toBe('$.reservation');
    expect(asl.States.ReserveStock!.ResultSelector).toEqual({ 'result.$': '$.Payload' });
  });

  test('no Retry or Catch names an error that neither the steps nor AWS raise', () => {
    const known = new Set<string>([...STEP_ERRORS, ...AWS_ERRORS]);
    for (const [, state] of tasks) {
      for (const rule of [...(state.Retry ?? []), ...(state.Catch ?? [])]) {
        for (const name of rule.ErrorEquals) expect(known).toContain(name);
      }
    }
  });

  describe.each(tasks.filter(([, s]) => actionOf(s) !== 'cancel'))('forward step %s', (_, state) => {
    const retried = (name: string) => state.Retry?.find((r) => r.ErrorEquals.includes(name));
    const caughtBy = (name: string) =>
      state.Catch?.find((c) => c.ErrorEquals.includes(name) || c.ErrorEquals.includes('States.ALL'));
    const reasonAfter = (next: string | undefined) => next && asl.States[next]?.Result?.reason;

    test('retries transient failures and never a business outcome', () => {
      expect(retried(TRANSIENT_ERROR)).toBeDefined();
      for (const outcome of STEP_OUTCOMES[actionOf(state)]) expect(retried(outcome)).toBeUndefined();
    });

    test('cancels each business outcome with its reason', () => {
      for (const outcome of STEP_OUTCOMES[actionOf(state)]) {
        expect([outcome, reasonAfter(caughtBy(outcome)?.Next)]).toEqual([outcome, REASON_OF[outcome]]);
      }
    });

    test('retries an unexpected failure a bounded number of times, then cancels it STEP_FAILED, never TIMEOUT', () => {
      const retry = retried(UNEXPECTED_ERROR);
      expect(retry?.MaxAttempts).toBeGreaterThan(0);
      expect(retry?.MaxAttempts).toBeLessThanOrEqual(3);
      const catcher = state.Catch?.find((c) => c.ErrorEquals.includes(UNEXPECTED_ERROR));
      expect(reasonAfter(catcher?.Next)).toBe('STEP_FAILED');
    });
  });

  test('the compensation retries whatever fails until it succeeds, and catches nothing', () => {
    const cancel = asl.States.CancelOrder!;
    expect(cancel.Retry?.[0]?.ErrorEquals).toEqual(['States.ALL']);
    expect(cancel.Retry?.[0]?.MaxAttempts).toBeGreaterThanOrEqual(50);
    expect(cancel.Catch).toBeUndefined();
  });
});
