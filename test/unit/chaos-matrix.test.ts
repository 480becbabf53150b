import {
  awsRefusal,
  callKey,
  FunctionDeaths,
  type LostAnswerRule,
  lostAnswerFor,
  refusalFor,
  validateDuplicates,
  validateDynamoFaults,
  validateFunctionDeaths,
} from '@commerce/local-cloud';
import {
  type Cell,
  chaosMatrix,
  MINUTES_LATE_MS,
  SAGA_TASKS,
  selectCells,
  TASK_TIMEOUT_SECONDS,
} from '../../load/chaos-matrix';
import {
  answersTheFaultChanged,
  type CellObservation,
  cancelledByReason,
  explainDeadLetter,
  judgeCell,
  matrixTable,
} from '../../load/chaos-verdicts';
import asl from '../../statemachines/order-saga.asl.json';

const matrix = chaosMatrix();
const cell = (name: string): Cell => matrix.find((c) => c.name === name)!;
const clean: CellObservation = {
  orders: 40,
  outcomes: { CONFIRMED: 38, 'CANCELLED OUT_OF_STOCK': 2 },
  failures: [],
  chargedTwice: [],
  withoutCause: [],
  deadLetters: [],
  retries: 0,
  taskFailures: 0,
};

describe('chaos: the matrix', () => {
  test('has every cell the issue asks for, each named once', () => {
    const names = matrix.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    for (const state of SAGA_TASKS) {
      for (const kind of ['retryable-10', 'retryable-50', 'fatal-10', 'fatal-50', 'late'])
        expect(names).toContain(`${state}-${kind}`);
    }
    expect(names).toEqual(
      expect.arrayContaining([
        'baseline',
        'duplicates',
        'dynamodb-throughput-20',
        'dynamodb-throttling-20',
        'dynamodb-conflict-20',
        'dynamodb-lost-answer-20',
        'functions-die-after-work-20',
        'functions-die-midway-20',
        'duplicates-minutes-late',
        'crash',
      ]),
    );
  });

  test('the function-death cells kill every function after its work and midway, each explaining its dead letters', () => {
    for (const when of ['after-work', 'midway'] as const) {
      const dying = cell(`functions-die-${when}-20`);
      expect(dying.faults.functions).toEqual([{ when, rate: 0.2 }]);
      // The client sees the death (a 500) and resends with its key: the first answer is not the judge.
      expect(dying.answersUnchanged).toBeUndefined();
      const letter = {
        queue: 'InventoryProjectionFailures',
        messageId: 'm9',
        body: JSON.stringify({
          DDBStreamBatchInfo: {},
          responseContext: {
            localLastError:
              'Runtime.ExitError: RequestId: r Error: Runtime exited with error: signal: killed (a fault injected midway)',
          },
        }),
      };
      expect(explainDeadLetter(letter, dying.faults).explainedBy).toMatch(/functions dying/);
      expect(explainDeadLetter(letter, cell('baseline').faults).explainedBy).toBeUndefined();
    }
  });

  test('the minutes-late cell delivers its copies after every saga has ended', () => {
    const late = cell('duplicates-minutes-late');
    expect(late.faults.duplicates.lateMs).toBe(MINUTES_LATE_MS);
    expect(MINUTES_LATE_MS).toBeGreaterThanOrEqual(60_000);
    expect(late.answersUnchanged).toBe(true);
  });

  test('a dead letter no one expected is still redriven before the invariants', () => {
    const dying = cell('functions-die-midway-20');
    const letters = [
      { queue: 'q', messageId: 'm', source: 'stream' as const, cause: 'Runtime.ExitError', explainedBy: 'x' },
    ];
    expect(judgeCell(dying, { ...clean, deadLetters: letters }).problems).toEqual(['no redrive ran']);
    expect(judgeCell(dying, { ...clean, deadLetters: letters, redrive: { redriven: 1, left: [] } }).ok).toBe(
      true,
    );
    expect(judgeCell(dying, clean).ok).toBe(true);
  });

  test('the lost-answer cell allows no cancellation of its own, and no answer the client would not have had', () => {
    const lost = cell('dynamodb-lost-answer-20');
    expect(lost.faults.dynamodb).toEqual([{ kind: 'lost-answer', rate: 0.2 }]);
    expect(lost.reasons).toEqual([]);
    expect(lost.answersUnchanged).toBe(true);
    // A lost answer explains no dead letter: the retry found the write made, so nothing was given up.
    const letter = {
      queue: 'dlq',
      messageId: 'm1',
      body: JSON.stringify({
        DDBStreamBatchInfo: {},
        responseContext: { localLastError: 'InternalServerError' },
      }),
    };
    expect(explainDeadLetter(letter, lost.faults).explainedBy).toBeUndefined();
  });

  test('the EventBridge cells: partial and total PutEvents failures, each explaining its own dead letters', () => {
    expect(cell('eventbridge-partial-20').faults.eventbridge).toEqual({
      entries: 0.2,
      calls: 0,
      entryError: 'InternalFailure',
    });
    expect(cell('eventbridge-throttled-20').faults.eventbridge).toEqual({ entries: 0, calls: 0.2 });
    const letter = {
      queue: 'OutboxDlq',
      messageId: 'm2',
      body: JSON.stringify({
        DDBStreamBatchInfo: {},
        responseContext: { localLastError: 'ThrottlingException: Rate exceeded.' },
      }),
    };
    expect(explainDeadLetter(letter, cell('eventbridge-throttled-20').faults).explainedBy).toMatch(
      /EventBridge/,
    );
    expect(explainDeadLetter(letter, cell('baseline').faults).explainedBy).toBeUndefined();
  });

  test('the dead-letter cells: each fault explains its own letters, must make some, and must redrive them all', () => {
    const poison = cell('poison-record');
    const failing = cell('target-failing');
    expect(poison.deadLetters).toBe('expected');
    const streamLetter = {
      queue: 'InventoryProjectionFailures',
      messageId: 'm3',
      body: JSON.stringify({
        DDBStreamBatchInfo: {},
        responseContext: {
          localLastError: 'PoisonRecord: InventoryProjectorFunction fails on record 7 every time',
        },
      }),
    };
    const ruleLetter = {
      queue: 'SagaDeadLetters',
      messageId: 'm4',
      body: JSON.stringify({
        rule: 'arn',
        error: 'TargetFailing: rule SagaStartOnOrderPlaced target t failed',
      }),
    };
    expect(explainDeadLetter(streamLetter, poison.faults).explainedBy).toMatch(/poison/);
    expect(explainDeadLetter(ruleLetter, failing.faults).explainedBy).toMatch(/SagaStartOnOrderPlaced/);
    expect(explainDeadLetter(streamLetter, failing.faults).explainedBy).toBeUndefined();
    const letters = [explainDeadLetter(streamLetter, poison.faults)];
    expect(judgeCell(poison, { ...clean, deadLetters: letters, redrive: { redriven: 1, left: [] } }).ok).toBe(
      true,
    );
    expect(
      judgeCell(poison, { ...clean, deadLetters: [], redrive: { redriven: 0, left: [] } }).problems,
    ).toEqual(['the fault made no dead letter']);
    expect(judgeCell(poison, { ...clean, deadLetters: letters }).problems).toEqual(['no redrive ran']);
    expect(
      judgeCell(poison, {
        ...clean,
        deadLetters: letters,
        redrive: { redriven: 0, left: ['q m3: failed again'] },
      }).problems,
    ).toEqual(['dead letter not redriven: q m3: failed again']);
  });

  test('answers a fault changed: a 5xx, a 429 or none at all, never the 4xx of the load itself', () => {
    expect(answersTheFaultChanged([{ 'reserve_stock 409': 4, 'place_order 404': 1 }])).toEqual([]);
    expect(
      answersTheFaultChanged([
        { 'place_order 500': 1, 'reserve_stock 409': 2 },
        { 'place_order 500': 2, 'create_customer 429': 1, 'errors.ETIMEDOUT': 1 },
      ]),
    ).toEqual([
      '3 answer(s) the fault changed: place_order 500',
      '1 answer(s) the fault changed: create_customer 429',
      '1 answer(s) the fault changed: errors.ETIMEDOUT',
    ]);
  });

  test('the saga tasks and their timeout are the ASL’s', () => {
    const states = asl.States as Record<string, { Type: string; Resource?: string; TimeoutSeconds?: number }>;
    // The steps, which the matrix faults; not ClaimedAlready, a read whose failure leaves the claim to ReserveStock.
    const tasks = Object.entries(states).filter(
      ([, s]) => s.Type === 'Task' && s.Resource === 'arn:aws:states:::lambda:invoke',
    );
    expect(tasks.map(([name]) => name).sort()).toEqual([...SAGA_TASKS].sort());
    for (const [, task] of tasks) expect(task.TimeoutSeconds).toBe(TASK_TIMEOUT_SECONDS);
    // A late attempt starts past the timeout, so the Task has timed out before its effect lands.
    for (const state of SAGA_TASKS)
      expect(cell(`${state}-late`).faults.steps[0]!.delayMs).toBeGreaterThan(TASK_TIMEOUT_SECONDS * 1000);
  });

  test('a retryable fault uses an error the ASL retries, a fatal one an error it does not back off on', () => {
    const retried = (
      asl.States.CapturePayment.Retry as { ErrorEquals: string[]; MaxAttempts: number }[]
    ).find((r) => r.ErrorEquals.includes(cell('CapturePayment-retryable-10').faults.steps[0]!.error!));
    expect(retried?.MaxAttempts).toBeGreaterThanOrEqual(3);
    expect(cell('CapturePayment-fatal-50').faults.steps[0]!.error).toBe('StepFailed');
  });

  test('a CancelOrder cell sends orders to compensation, or its fault would meet almost no attempt', () => {
    for (const kind of ['retryable-10', 'fatal-50', 'late']) {
      const { faults, reasons } = cell(`CancelOrder-${kind}`);
      expect(faults.steps.map((s) => s.state)).toEqual(['CancelOrder', 'ConfirmOrder']);
      expect(faults.steps[1]).toMatchObject({ error: 'ConfirmationFailed' });
      expect(reasons).toContain('CONFIRMATION_FAILED');
    }
    expect(cell('ConfirmOrder-fatal-10').faults.steps).toHaveLength(1);
  });

  test('--cells picks cells by name or by prefix, and refuses an unknown one', () => {
    expect(selectCells(matrix, undefined)).toHaveLength(matrix.length);
    expect(selectCells(matrix, 'baseline,crash').map((c) => c.name)).toEqual(['baseline', 'crash']);
    expect(selectCells(matrix, 'ConfirmOrder').map((c) => c.name)).toEqual([
      'ConfirmOrder-retryable-10',
      'ConfirmOrder-retryable-50',
      'ConfirmOrder-fatal-10',
      'ConfirmOrder-fatal-50',
      'ConfirmOrder-late',
    ]);
    expect(() => selectCells(matrix, 'baseline,nope')).toThrow(/no cell nope/);
  });
});

describe('chaos: judging a cell', () => {
  test('passes a clean run', () => {
    const result = judgeCell(cell('baseline'), clean);
    expect(result).toMatchObject({ ok: true, problems: [], cell: 'baseline' });
  });

  test('fails on a broken invariant, a double charge, an effect without its cause, or no orders', () => {
    expect(judgeCell(cell('baseline'), { ...clean, failures: ['invariant broken (1×): x'] }).ok).toBe(false);
    expect(judgeCell(cell('duplicates'), { ...clean, chargedTwice: ['ord_1'] }).problems).toEqual([
      'charged twice: ord_1',
    ]);
    expect(
      judgeCell(cell('duplicates'), { ...clean, withoutCause: ['order ord_2 of customer c'] }).problems,
    ).toEqual(['an effect without its cause: order ord_2 of customer c']);
    expect(judgeCell(cell('baseline'), { ...clean, orders: 0, outcomes: {} }).problems).toEqual([
      'no order was placed',
    ]);
  });

  test('a cancellation must have a reason the load or the cell’s fault explains', () => {
    const stepFailed = { ...clean, outcomes: { CONFIRMED: 30, 'CANCELLED STEP_FAILED': 10 } };
    expect(judgeCell(cell('ReserveStock-fatal-50'), stepFailed).ok).toBe(true);
    expect(judgeCell(cell('baseline'), stepFailed).problems).toEqual([
      "10 order(s) CANCELLED STEP_FAILED: a reason this cell's fault does not explain",
    ]);
    // Compensation failing is retried to the end: it explains no cancellation.
    expect(judgeCell(cell('CancelOrder-fatal-50'), stepFailed).ok).toBe(false);
    const timedOut = { ...clean, outcomes: { CONFIRMED: 30, 'CANCELLED TIMEOUT': 10 } };
    expect(judgeCell(cell('CapturePayment-late'), timedOut).ok).toBe(true);
    expect(judgeCell(cell('duplicates'), timedOut).ok).toBe(false);
  });

  test('a dead letter is explained only by the cell’s own fault', () => {
    const throttled = {
      queue: 'ProjectorDeadLetters',
      messageId: 'm1',
      body: JSON.stringify({
        requestContext: { condition: 'RetryAttemptsExhausted' },
        responseContext: {
          localLastError: 'ThrottlingException: Rate of requests exceeds the allowed throughput.',
        },
        DDBStreamBatchInfo: { batchSize: 3 },
      }),
    };
    const explained = explainDeadLetter(throttled, cell('dynamodb-throttling-20').faults);
    expect(explained).toMatchObject({ source: 'stream', explainedBy: 'DynamoDB ThrottlingException 20%' });
    const unexplained = explainDeadLetter(throttled, cell('duplicates').faults);
    expect(unexplained.explainedBy).toBeUndefined();
    const result = judgeCell(cell('duplicates'), { ...clean, deadLetters: [unexplained] });
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toMatch(
      /unexplained dead letter in ProjectorDeadLetters \(stream\): ThrottlingException/,
    );

    const ruleLetter = {
      queue: 'SweeperDeadLetters',
      messageId: 'm2',
      body: JSON.stringify({ rule: 'arn:rule', error: 'connect ECONNREFUSED 127.0.0.1:8000', event: {} }),
    };
    expect(explainDeadLetter(ruleLetter, cell('crash').faults)).toMatchObject({
      source: 'rule',
      explainedBy: 'the crash',
    });
    expect(explainDeadLetter(ruleLetter, cell('baseline').faults).explainedBy).toBeUndefined();
    expect(explainDeadLetter({ ...ruleLetter, body: 'not json' }, cell('crash').faults)).toMatchObject({
      source: 'unknown',
    });
  });

  test('the report is a table with a row per cell', () => {
    const results = [
      judgeCell(cell('baseline'), clean),
      judgeCell(cell('duplicates'), {
        ...clean,
        retries: 3,
        outcomes: { CONFIRMED: 37, 'CANCELLED TIMEOUT': 3 },
        injected: {
          dynamodbRefused: 0,
          lostAnswers: 0,
          busEntriesRefused: 0,
          busCallsRefused: 0,
          poisonRecords: 0,
          failedTargetAttempts: 0,
          stepFailures: 0,
          duplicated: 12,
          functionDeaths: 0,
        },
      }),
    ];
    const lines = matrixTable(matrix, results).split('\n');
    expect(lines[0]).toBe(
      '| cell | fault | orders | confirmed | cancelled by reason | faults injected | retries | DLQ | result |',
    );
    expect(lines).toHaveLength(4);
    expect(lines[2]).toBe('| `baseline` | no fault | 40 | 38 | OUT_OF_STOCK 2 | n/a | 0 | 0 | pass |');
    expect(lines[3]).toMatch(
      /^\| `duplicates` \| .* \| 40 \| 37 \| TIMEOUT 3 \| duplicate deliveries 12 \| 3 \| 0 \| \*\*FAIL\*\*: 3 order\(s\) CANCELLED TIMEOUT/,
    );
    expect(cancelledByReason({ CONFIRMED: 1 })).toBe('0');
    expect(cancelledByReason({ 'CANCELLED A': 1, 'CANCELLED B': 4, CANCELLED: 2 })).toBe(
      'B 4, (none) 2, A 1',
    );
  });
});

describe('local faults: their settings', () => {
  test('function deaths: a moment, a rate, the functions by prefix, and at most `count` of them', () => {
    expect(validateFunctionDeaths([{ when: 'midway', rate: 0.2 }])).toEqual([{ when: 'midway', rate: 0.2 }]);
    expect(() => validateFunctionDeaths([{ when: 'later', rate: 0.2 }])).toThrow(/after-work, midway/);
    expect(() => validateFunctionDeaths([{ when: 'midway', rate: 2 }])).toThrow(/rate/);
    expect(() => validateFunctionDeaths([{ when: 'midway', rate: 1, count: 0 }])).toThrow(/count/);
    expect(() => validateFunctionDeaths([{ when: 'midway', rate: 1, functions: [''] }])).toThrow(/functions/);
    expect(() => validateFunctionDeaths([{ when: 'midway', rate: 1, times: 1 }])).toThrow(
      /unknown field times/,
    );
    expect(() => validateFunctionDeaths({})).toThrow(/array/);

    const deaths = new FunctionDeaths(() => 0);
    deaths.set(validateFunctionDeaths([{ when: 'after-work', rate: 1, functions: ['SagaSteps'], count: 2 }]));
    expect(deaths.draw('OrdersApiFunction1234', 'after-work')).toBe(false);
    expect(deaths.draw('SagaStepsFunction1234', 'midway')).toBe(false);
    expect(deaths.draw('SagaStepsFunction1234', 'after-work')).toBe(true);
    expect(deaths.draw('SagaStepsFunction1234', 'after-work')).toBe(true);
    // Its count spent, the rule lies dormant until it is set again.
    expect(deaths.draw('SagaStepsFunction1234', 'after-work')).toBe(false);
    expect(deaths.injected).toEqual({ afterWork: 2, midway: 0 });
    deaths.set(deaths.inForce);
    expect(deaths.draw('SagaStepsFunction1234', 'after-work')).toBe(true);
    const never = new FunctionDeaths(() => 0.5);
    never.set([{ when: 'midway', rate: 0.2 }]);
    expect(never.draw('AnyFunction', 'midway')).toBe(false);
  });

  test('DynamoDB refusals: each error AWS gives under pressure, a rate from 0 to 1', () => {
    expect(validateDynamoFaults([{ error: 'ThrottlingException', rate: 0.2 }])).toEqual([
      { error: 'ThrottlingException', rate: 0.2 },
    ]);
    expect(() => validateDynamoFaults([{ error: 'Nope', rate: 0.2 }])).toThrow(/error must be one of/);
    expect(() => validateDynamoFaults([{ error: 'ThrottlingException', rate: 2 }])).toThrow(/rate/);
    expect(() =>
      validateDynamoFaults([{ error: 'ThrottlingException', rate: 1, operations: ['ListTables'] }]),
    ).toThrow(/operations/);
    expect(() => validateDynamoFaults({})).toThrow(/array/);
  });

  test('a transaction conflict refuses transactions, and single writes only when named; the draw is per rule', () => {
    const conflict = [{ error: 'TransactionConflict', rate: 1 }] as const;
    expect(refusalFor(conflict, 'Query')).toBeUndefined();
    expect(refusalFor(conflict, 'PutItem')).toBeUndefined();
    expect(refusalFor(conflict, 'TransactWriteItems')).toEqual(conflict[0]);
    const writes = [{ error: 'TransactionConflict', rate: 1, operations: ['PutItem', 'Query'] }] as const;
    expect(refusalFor(writes, 'PutItem')).toEqual(writes[0]);
    expect(refusalFor(writes, 'Query')).toBeUndefined();
    const half = [{ error: 'ThrottlingException', rate: 0.5 }] as const;
    expect(refusalFor(half, 'GetItem', () => 0.49)).toEqual(half[0]);
    expect(refusalFor(half, 'GetItem', () => 0.5)).toBeUndefined();
    expect(refusalFor([], 'GetItem', () => 0)).toBeUndefined();
  });

  test('lost answers: writes only, a rate, a way, and at most `count` of them', () => {
    expect(validateDynamoFaults([{ kind: 'lost-answer', rate: 0.2 }])).toEqual([
      { kind: 'lost-answer', rate: 0.2 },
    ]);
    expect(
      validateDynamoFaults([
        { kind: 'lost-answer', rate: 1, count: 1, way: 'ConnectionReset', operations: ['PutItem'] },
      ]),
    ).toEqual([{ kind: 'lost-answer', rate: 1, count: 1, way: 'ConnectionReset', operations: ['PutItem'] }]);
    expect(() => validateDynamoFaults([{ kind: 'lost', rate: 0.2 }])).toThrow(/kind must be lost-answer/);
    expect(() => validateDynamoFaults([{ kind: 'lost-answer', rate: -1 }])).toThrow(/rate/);
    expect(() => validateDynamoFaults([{ kind: 'lost-answer', rate: 1, way: 'Timeout' }])).toThrow(/way/);
    expect(() => validateDynamoFaults([{ kind: 'lost-answer', rate: 1, count: 0 }])).toThrow(/count/);
    // A read has no effect to lose the answer to.
    expect(() => validateDynamoFaults([{ kind: 'lost-answer', rate: 1, operations: ['Query'] }])).toThrow(
      /operations/,
    );

    const [rule] = validateDynamoFaults([{ kind: 'lost-answer', rate: 0.5 }]) as [LostAnswerRule];
    const none = { perRule: new Map<LostAnswerRule, number>(), calls: new Set<string>() };
    for (const write of ['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems'])
      expect(lostAnswerFor([rule], write, none, () => 0)?.rule).toBe(rule);
    expect(lostAnswerFor([rule], 'GetItem', none, () => 0)).toBeUndefined();
    expect(lostAnswerFor([rule], 'PutItem', none, () => 0.5)).toBeUndefined();
    // Either way, drawn per call, unless the rule names one.
    expect(lostAnswerFor([rule], 'PutItem', none, () => 0.1)?.way).toBe('InternalServerError');
    const draws = [0.1, 0.9];
    expect(lostAnswerFor([rule], 'PutItem', none, () => draws.shift()!)?.way).toBe('ConnectionReset');
    // A refusal rule loses no answer, and a lost-answer rule refuses nothing.
    expect(
      lostAnswerFor([{ error: 'ThrottlingException', rate: 1 }], 'PutItem', none, () => 0),
    ).toBeUndefined();
    expect(refusalFor([rule], 'PutItem', () => 0)).toBeUndefined();
    // `count`: spent once that many answers were lost.
    const [once] = validateDynamoFaults([{ kind: 'lost-answer', rate: 1, count: 1 }]) as [LostAnswerRule];
    const spent = (n: number) => ({ perRule: new Map([[once, n]]), calls: new Set<string>() });
    expect(lostAnswerFor([once], 'PutItem', spent(0))).toBeDefined();
    expect(lostAnswerFor([once], 'PutItem', spent(1))).toBeUndefined();
    // `once`: a call whose answer was lost is answered when it comes again (the SDK's retry).
    const [first] = validateDynamoFaults([{ kind: 'lost-answer', rate: 1, once: true }]) as [LostAnswerRule];
    const put = callKey('PutItem', { TableName: 't', Item: { id: { S: 'a' } } });
    const other = callKey('PutItem', { TableName: 't', Item: { id: { S: 'b' } } });
    const seen = { perRule: new Map<LostAnswerRule, number>(), calls: new Set([put]) };
    expect(lostAnswerFor([first], 'PutItem', seen, Math.random, put)).toBeUndefined();
    expect(lostAnswerFor([first], 'PutItem', seen, Math.random, other)?.rule).toBe(first);
  });

  test('a refusal is the answer AWS sends', () => {
    expect(awsRefusal('ProvisionedThroughputExceededException', 'PutItem', {})).toEqual({
      status: 400,
      body: {
        __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
        message: expect.stringMatching(/^The level of configured provisioned throughput/),
      },
    });
    expect(awsRefusal('ThrottlingException', 'Query', {}).body.__type).toBe(
      'com.amazon.coral.availability#ThrottlingException',
    );
    const cancelled = awsRefusal('TransactionConflict', 'TransactWriteItems', {
      TransactItems: [{}, {}, {}],
    }).body as { __type: string; Message: string; CancellationReasons: { Code: string }[] };
    expect(cancelled.__type).toBe('com.amazonaws.dynamodb.v20120810#TransactionCanceledException');
    expect(cancelled.CancellationReasons).toHaveLength(3);
    expect(cancelled.CancellationReasons.filter((r) => r.Code === 'TransactionConflict')).toHaveLength(1);
    expect(cancelled.Message).toMatch(/^Transaction cancelled, please refer cancellation reasons/);
    expect(awsRefusal('TransactionConflict', 'UpdateItem', {}).body.__type).toBe(
      'com.amazonaws.dynamodb.v20120810#TransactionConflictException',
    );
  });

  test('duplicate delivery: two rates, off when left out', () => {
    expect(validateDuplicates({})).toEqual({ streamRecords: 0, busEvents: 0 });
    expect(validateDuplicates({ busEvents: 1 })).toEqual({ streamRecords: 0, busEvents: 1 });
    expect(() => validateDuplicates({ streamRecords: -1 })).toThrow(/streamRecords/);
    expect(() => validateDuplicates({ lambda: 1 })).toThrow(/unknown field lambda/);
    // Late copies: after what followed them, out of order.
    expect(validateDuplicates({ streamRecords: 1, lateMs: 5_000 })).toEqual({
      streamRecords: 1,
      busEvents: 0,
      lateMs: 5_000,
    });
    expect(() => validateDuplicates({ lateMs: -1 })).toThrow(/lateMs/);
    expect(cell('duplicates-late').faults.duplicates).toEqual({
      streamRecords: 1,
      busEvents: 1,
      lateMs: 5_000,
    });
    // Two faults at once.
    const both = cell('lost-answers-and-step-failures').faults;
    expect([both.dynamodb.length, both.steps.length]).toEqual([1, 1]);
  });
});
