import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Assembly, readAssembly, resolver } from '../../assembly';
import { functionSpecs, LambdaRuntime } from '../../lambda/runtime';
import { readLogLines } from '../../logs';
import { type FaultRule, LocalStepFunctions, parseFaults } from '../../stepfunctions';

/**
 * Step Functions of the local cloud against a small assembly of its own
 * (no DynamoDB, no global local cloud): a saga loaded like
 * `DefinitionBody.fromFile` (S3 asset + substitutions), an inline
 * Fn::Join definition, and two real function sandboxes.
 */
const FIXTURES = join(__dirname, '..', 'fixtures', 'stepfunctions');
const ASL_HASH = 'a'.repeat(64);
const STATES_ARN = 'arn:aws:states:us-east-1:000000000000';
const SAGA_ARN = `${STATES_ARN}:stateMachine:OrderSaga`;
const TIMED_ARN = `${STATES_ARN}:stateMachine:Timed`;
/** The CDK bootstrap bucket, a CloudFormation `Fn::Sub` string (not a template literal). */
const ASSET_BUCKET = ['cdk-hnb659fds-assets', '$' + '{AWS::AccountId}', '$' + '{AWS::Region}'].join('-');

type Resources = Record<string, { Type: string; Properties?: unknown; Metadata?: unknown }>;

function lambda(assetDir: string, timeout: number) {
  return {
    Type: 'AWS::Lambda::Function',
    Properties: {
      Handler: 'index.handler',
      Runtime: 'nodejs22.x',
      Timeout: timeout,
      MemorySize: 128,
      Environment: { Variables: { STAGE: 'test' } },
    },
    Metadata: { 'aws:asset:path': assetDir },
  };
}

const BASE_RESOURCES: Resources = {
  StepsFunction: lambda('asset.steps', 5),
  SlowFunction: lambda('asset.slow', 10),
  SagaRole: { Type: 'AWS::IAM::Role', Properties: {} },
  OrderSaga: {
    Type: 'AWS::StepFunctions::StateMachine',
    Properties: {
      DefinitionS3Location: {
        Bucket: { 'Fn::Sub': ASSET_BUCKET },
        Key: `${ASL_HASH}.json`,
      },
      DefinitionSubstitutions: {
        StepsFunction: { 'Fn::GetAtt': ['StepsFunction', 'Arn'] },
        SlowFunction: { 'Fn::GetAtt': ['SlowFunction', 'Arn'] },
      },
      RoleArn: { 'Fn::GetAtt': ['SagaRole', 'Arn'] },
      StateMachineType: 'STANDARD',
    },
  },
  Timed: {
    Type: 'AWS::StepFunctions::StateMachine',
    Properties: {
      // A plain function ARN as the resource, then a wait past the machine's TimeoutSeconds.
      DefinitionString: {
        'Fn::Join': [
          '',
          [
            '{"StartAt":"Echo","TimeoutSeconds":1,"States":{"Echo":{"Type":"Task","Resource":"',
            { 'Fn::GetAtt': ['StepsFunction', 'Arn'] },
            '","Next":"Pause"},"Pause":{"Type":"Wait","Seconds":30,"End":true}}}',
          ],
        ],
      },
      RoleArn: { 'Fn::GetAtt': ['SagaRole', 'Arn'] },
    },
  },
};

/** Writes a cloud assembly as `cdk synth` lays it out: manifest, template, asset manifest, assets. */
function writeAssembly(dir: string, resources: Resources): Assembly {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: '55.0.0',
      artifacts: {
        'Test.assets': { type: 'cdk:asset-manifest', properties: { file: 'Test.assets.json' } },
        Test: { type: 'aws:cloudformation:stack', properties: { templateFile: 'Test.template.json' } },
      },
    }),
  );
  writeFileSync(join(dir, 'Test.template.json'), JSON.stringify({ Resources: resources }));
  writeFileSync(
    join(dir, 'Test.assets.json'),
    JSON.stringify({
      version: '55.0.0',
      files: {
        [ASL_HASH]: {
          displayName: 'OrderSaga/DefinitionBody',
          source: { path: `asset.${ASL_HASH}.json`, packaging: 'file' },
          destinations: {
            'current_account-current_region': {
              bucketName: ASSET_BUCKET,
              objectKey: `${ASL_HASH}.json`,
            },
          },
        },
      },
    }),
  );
  cpSync(join(FIXTURES, 'order.asl.json'), join(dir, `asset.${ASL_HASH}.json`));
  cpSync(join(FIXTURES, 'functions', 'steps'), join(dir, 'asset.steps'), { recursive: true });
  cpSync(join(FIXTURES, 'functions', 'slow'), join(dir, 'asset.slow'), { recursive: true });
  return readAssembly(dir);
}

interface Described {
  executionArn: string;
  status: string;
  input: string;
  output?: string;
  error?: string;
  cause?: string;
  startDate: number;
  stopDate?: number;
}
interface Event {
  id: number;
  previousEventId: number;
  timestamp: number;
  type: string;
  [details: string]: unknown;
}

let work: string;
let assembly: Assembly;
let runtime: LambdaRuntime;
let sfn: LocalStepFunctions;
const logs: string[] = [];

function create(faults?: FaultRule[]) {
  return new LocalStepFunctions(assembly, resolver(assembly), runtime, (m) => logs.push(m), faults);
}

async function finished(machine: LocalStepFunctions, executionArn: string): Promise<Described> {
  for (;;) {
    const d = (await machine.handle('DescribeExecution', { executionArn })) as Described;
    if (d.status !== 'RUNNING') return d;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function history(machine: LocalStepFunctions, executionArn: string): Promise<Event[]> {
  return (
    (await machine.handle('GetExecutionHistory', { executionArn, maxResults: 1000 })) as { events: Event[] }
  ).events;
}

const types = (events: Event[]) => events.map((e) => e.type);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'local-sfn-'));
  assembly = writeAssembly(join(work, 'cdk.out'), BASE_RESOURCES);
  runtime = new LambdaRuntime(functionSpecs(assembly, resolver(assembly), {}), join(work, 'logs'));
  await runtime.warmAll();
  sfn = create();
});

afterAll(async () => {
  await sfn?.drain();
  await runtime?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('local Step Functions', () => {
  test('reads both machines: the S3 asset with its substitutions, and the Fn::Join string', async () => {
    expect(sfn.stateMachines).toEqual([
      { logicalId: 'OrderSaga', arn: SAGA_ARN, name: 'OrderSaga', type: 'STANDARD' },
      { logicalId: 'Timed', arn: TIMED_ARN, name: 'Timed', type: 'STANDARD' },
    ]);
    const described = (await sfn.handle('DescribeStateMachine', { stateMachineArn: SAGA_ARN })) as {
      definition: string;
      roleArn: string;
    };
    expect(described.definition).toContain(
      '"FunctionName": "arn:aws:lambda:us-east-1:000000000000:function:StepsFunction"',
    );
    expect(described.definition).not.toContain('${');
    expect(described.roleArn).toBe('arn:aws:iam::000000000000:role/SagaRole');
  });

  test('happy path: lambda:invoke shape, $$.Execution.Id, AWS response and history shapes', async () => {
    const input = JSON.stringify({ orderId: 'o-1', quantity: 2, captureDelayMs: 0 });
    const started = (await sfn.handle('StartExecution', {
      stateMachineArn: SAGA_ARN,
      name: 'happy-1',
      input,
    })) as { executionArn: string; startDate: number };
    expect(started.executionArn).toBe(`${STATES_ARN}:execution:OrderSaga:happy-1`);
    expect(typeof started.startDate).toBe('number');
    expect(Math.abs(started.startDate - Date.now() / 1000)).toBeLessThan(5);

    const d = await finished(sfn, started.executionArn);
    expect(d).toMatchObject({
      executionArn: started.executionArn,
      stateMachineArn: SAGA_ARN,
      name: 'happy-1',
      status: 'SUCCEEDED',
      input,
      inputDetails: { included: true },
      outputDetails: { included: true },
    });
    expect(d.stopDate).toBeGreaterThanOrEqual(d.startDate);
    expect(JSON.parse(d.output!)).toEqual({
      orderId: 'o-1',
      quantity: 2,
      captureDelayMs: 0,
      reservation: { result: { reserved: 2, executionId: started.executionArn } },
      payment: { result: { captured: true, waitedMs: 0 } },
    });

    const events = await history(sfn, started.executionArn);
    expect(types(events)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskSucceeded',
      'TaskStateExited',
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskSucceeded',
      'TaskStateExited',
      'SucceedStateEntered',
      'SucceedStateExited',
      'ExecutionSucceeded',
    ]);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.map((e) => e.previousEventId)).toEqual(events.map((e) => (e.id === 2 ? 0 : e.id - 1)));
    for (const e of events) expect(typeof e.timestamp).toBe('number');
    expect(events[0]).toMatchObject({
      executionStartedEventDetails: {
        input,
        inputDetails: { truncated: false },
        roleArn: 'arn:aws:iam::000000000000:role/SagaRole',
      },
    });
    expect(events[1]).toMatchObject({ stateEnteredEventDetails: { name: 'Reserve', input } });
    const scheduled = events[2]!.taskScheduledEventDetails as Record<string, unknown>;
    expect(scheduled).toMatchObject({ resourceType: 'lambda', resource: 'invoke', region: 'us-east-1' });
    expect(scheduled.timeoutInSeconds).toBe(5);
    expect(JSON.parse(String(scheduled.parameters))).toEqual({
      FunctionName: 'arn:aws:lambda:us-east-1:000000000000:function:StepsFunction',
      Payload: { action: 'reserve', orderId: 'o-1', quantity: 2, executionId: started.executionArn },
    });
    const invokeResult = JSON.parse(
      String((events[4]!.taskSucceededEventDetails as Record<string, unknown>).output),
    ) as Record<string, unknown>;
    expect(invokeResult).toMatchObject({
      ExecutedVersion: '$LATEST',
      Payload: { reserved: 2, executionId: started.executionArn },
      StatusCode: 200,
      SdkHttpMetadata: { HttpStatusCode: 200 },
      SdkResponseMetadata: { RequestId: expect.any(String) },
    });
    expect(events.at(-1)).toMatchObject({
      executionSucceededEventDetails: { output: d.output, outputDetails: { truncated: false } },
    });

    // Pages, in both orders, and without execution data.
    const first = (await sfn.handle('GetExecutionHistory', {
      executionArn: started.executionArn,
      maxResults: 5,
    })) as { events: Event[]; nextToken?: string };
    expect(first.events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
    const second = (await sfn.handle('GetExecutionHistory', {
      executionArn: started.executionArn,
      maxResults: 5,
      nextToken: first.nextToken,
    })) as { events: Event[]; nextToken?: string };
    expect(second.events.map((e) => e.id)).toEqual([6, 7, 8, 9, 10]);
    const reversed = (await sfn.handle('GetExecutionHistory', {
      executionArn: started.executionArn,
      reverseOrder: true,
      maxResults: 3,
      includeExecutionData: false,
    })) as { events: Event[]; nextToken?: string };
    expect(reversed.events.map((e) => e.id)).toEqual([14, 13, 12]);
    expect(reversed.events[0]!.executionSucceededEventDetails).toEqual({});
    expect(reversed.nextToken).toBeDefined();
    await expect(
      sfn.handle('GetExecutionHistory', { executionArn: started.executionArn, nextToken: 'bogus' }),
    ).rejects.toMatchObject({ code: 'InvalidToken' });
  });

  test("each Task attempt that invoked a function: its request id, on Invoke's answer and on the lines it logged", async () => {
    // A machine of its own: the counters of the shared one are checked below.
    const own = create();
    const started = (await own.handle('StartExecution', {
      stateMachineArn: SAGA_ARN,
      name: 'logged-1',
      input: JSON.stringify({ orderId: 'o-logged', quantity: 1, captureDelayMs: 0 }),
    })) as { executionArn: string };
    await finished(own, started.executionArn);
    const events = await history(own, started.executionArn);
    const scheduled = events.filter((e) => e.type === 'TaskScheduled');
    expect(scheduled).toHaveLength(2);
    const invocations = own.consoleExecution(started.executionArn)!.invocations;
    expect([...invocations.keys()]).toEqual(scheduled.map((e) => e.id));
    const [reserve, capture] = scheduled.map((e) => invocations.get(e.id)!);
    expect(reserve!.functionName).toBe('StepsFunction');
    expect(capture!.functionName).toBe('SlowFunction');
    expect(reserve!.requestId).not.toBe(capture!.requestId);
    // Lambda's Invoke answers with the invocation's request id, as AWS's does.
    const succeeded = events.filter((e) => e.type === 'TaskSucceeded');
    const answered = succeeded.map(
      (e) =>
        (
          JSON.parse(String((e.taskSucceededEventDetails as Record<string, unknown>).output)) as {
            SdkResponseMetadata: { RequestId: string };
          }
        ).SdkResponseMetadata.RequestId,
    );
    expect(answered).toEqual([reserve!.requestId, capture!.requestId]);
    // The line the function wrote carries its invocation's request id, and nothing else of this execution's does.
    const lines = await readLogLines({ logDir: join(work, 'logs'), requestId: reserve!.requestId });
    expect(lines.map((l) => [l.functionName, l.message, l.fields?.orderId, l.fields?.error])).toEqual([
      ['StepsFunction', 'reserving', 'o-logged', { $metadata: { requestId: 'sdk-request' } }],
    ]);
    // A line with a requestId of its own keeps it.
    const kept = await readLogLines({ logDir: join(work, 'logs'), requestId: 'own-o-logged' });
    expect(kept.map((l) => [l.message, l.text.match(/"requestId"/g)?.length])).toEqual([['its own', 1]]);
    expect(await readLogLines({ logDir: join(work, 'logs'), requestId: capture!.requestId })).toEqual([]);
    await own.drain();
  });

  test('Retry with backoff on an injected transient fault, then success; each attempt in the history', async () => {
    const faulty = create(parseFaults('Reserve:error=TransientError:cause=flaky:rate=0.5'));
    const random = jest
      .spyOn(Math, 'random')
      .mockReturnValueOnce(0.1)
      .mockReturnValueOnce(0.1)
      .mockReturnValue(0.9);
    let d: Described;
    let events: Event[];
    try {
      const { executionArn } = await faulty.startExecution(SAGA_ARN, {
        orderId: 'o-2',
        quantity: 1,
        captureDelayMs: 0,
      });
      d = await finished(faulty, executionArn);
      events = await history(faulty, executionArn);
    } finally {
      random.mockRestore();
    }
    expect(d.status).toBe('SUCCEEDED');
    const reserve = events.slice(1, events.findIndex((e) => e.type === 'TaskStateExited') + 1);
    expect(types(reserve)).toEqual([
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskFailed',
      'TaskScheduled',
      'TaskStarted',
      'TaskFailed',
      'TaskScheduled',
      'TaskStarted',
      'TaskSucceeded',
      'TaskStateExited',
    ]);
    expect(reserve[3]!.taskFailedEventDetails).toEqual({
      resourceType: 'lambda',
      resource: 'invoke',
      error: 'TransientError',
      cause: 'flaky',
    });
    // IntervalSeconds 1, BackoffRate 2: about 1 s, then about 2 s between attempts.
    const firstWait = reserve[4]!.timestamp - reserve[3]!.timestamp;
    const secondWait = reserve[7]!.timestamp - reserve[6]!.timestamp;
    expect(firstWait).toBeGreaterThanOrEqual(0.95);
    expect(firstWait).toBeLessThan(1.6);
    expect(secondWait).toBeGreaterThanOrEqual(1.95);
    expect(secondWait).toBeLessThan(2.6);
    expect(faulty.stats).toMatchObject({ executions: 1, succeeded: 1, failed: 0, taskInvocations: 4 });
    expect(faulty.stats.stateTransitions).toBe(3);
  });

  test('Catch of a business error (the function errorType) routes to the compensation', async () => {
    const { executionArn } = await sfn.startExecution(SAGA_ARN, {
      orderId: 'o-3',
      quantity: 50,
      captureDelayMs: 0,
    });
    const d = await finished(sfn, executionArn);
    expect(d.status).toBe('SUCCEEDED');
    const output = JSON.parse(d.output!) as { error: { Error: string; Cause: string }; release: unknown };
    expect(output.error.Error).toBe('OutOfStock');
    const cause = JSON.parse(output.error.Cause) as {
      errorMessage: string;
      errorType: string;
      trace: string[];
    };
    expect(cause).toMatchObject({ errorType: 'OutOfStock', errorMessage: 'only 10 left for order o-3' });
    expect(Array.isArray(cause.trace)).toBe(true);
    expect(output.release).toEqual({ result: { released: true, reason: 'OutOfStock' } });

    const events = await history(sfn, executionArn);
    expect(types(events)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskFailed',
      'TaskStateExited',
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskSucceeded',
      'TaskStateExited',
      'SucceedStateEntered',
      'SucceedStateExited',
      'ExecutionSucceeded',
    ]);
    expect(events[4]!.taskFailedEventDetails).toMatchObject({
      error: 'OutOfStock',
      cause: output.error.Cause,
    });
    expect(events[6]!.stateEnteredEventDetails).toMatchObject({ name: 'Release' });
  });

  test('a Task past its TimeoutSeconds fails with States.Timeout (not retried as States.TaskFailed)', async () => {
    const { executionArn } = await sfn.startExecution(SAGA_ARN, {
      orderId: 'o-4',
      quantity: 1,
      captureDelayMs: 2500,
    });
    const d = await finished(sfn, executionArn);
    expect(d).toMatchObject({ status: 'FAILED', error: 'States.Timeout' });
    const events = await history(sfn, executionArn);
    expect(types(events).slice(-5)).toEqual([
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskTimedOut',
      'ExecutionFailed',
    ]);
    expect(events.at(-2)!.taskTimedOutEventDetails).toMatchObject({ error: 'States.Timeout' });
    expect(events.at(-2)!.timestamp - events.at(-3)!.timestamp).toBeGreaterThanOrEqual(0.95);
    expect(events.at(-1)!.executionFailedEventDetails).toMatchObject({ error: 'States.Timeout' });
  });

  test("the machine's TimeoutSeconds times the execution out; a plain function ARN returns its result", async () => {
    const { executionArn } = await sfn.startExecution(TIMED_ARN, { action: 'echo', message: 'hi' });
    const d = await finished(sfn, executionArn);
    expect(d).toMatchObject({ status: 'TIMED_OUT', error: 'States.Timeout' });
    expect(d.stopDate! - d.startDate).toBeGreaterThanOrEqual(0.95);
    expect(d.stopDate! - d.startDate).toBeLessThan(5);
    const events = await history(sfn, executionArn);
    expect(types(events)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'WaitStateEntered',
      'ExecutionTimedOut',
    ]);
    expect(events[2]!.lambdaFunctionScheduledEventDetails).toMatchObject({
      resource: 'arn:aws:lambda:us-east-1:000000000000:function:StepsFunction',
    });
    expect(JSON.parse(String((events[5]!.stateExitedEventDetails as { output: string }).output))).toEqual({
      echoed: 'hi',
    });
  });

  test('StartExecution with the same name: the same execution while open and the same input; else ExecutionAlreadyExists', async () => {
    const input = JSON.stringify({ orderId: 'o-5', quantity: 1, captureDelayMs: 300 });
    const start = (body: string) =>
      sfn.handle('StartExecution', { stateMachineArn: SAGA_ARN, name: 'order-o-5', input: body }) as Promise<{
        executionArn: string;
        startDate: number;
      }>;
    const first = await start(input);
    const again = await start(input);
    expect(again).toEqual(first);
    expect(sfn.runningCount).toBe(1);
    await expect(start(JSON.stringify({ orderId: 'o-5', quantity: 2 }))).rejects.toMatchObject({
      code: 'ExecutionAlreadyExists',
    });
    expect((await finished(sfn, first.executionArn)).status).toBe('SUCCEEDED');
    await expect(start(input)).rejects.toMatchObject({ code: 'ExecutionAlreadyExists' });

    const listed = (await sfn.handle('ListExecutions', {
      stateMachineArn: SAGA_ARN,
      statusFilter: 'SUCCEEDED',
    })) as { executions: { executionArn: string; status: string; name: string }[] };
    expect(listed.executions.filter((e) => e.name === 'order-o-5')).toEqual([
      expect.objectContaining({ executionArn: first.executionArn, status: 'SUCCEEDED' }),
    ]);
    expect(listed.executions.every((e) => e.status === 'SUCCEEDED')).toBe(true);
    await expect(
      sfn.handle('StartExecution', { stateMachineArn: SAGA_ARN, name: 'bad name' }),
    ).rejects.toMatchObject({
      code: 'InvalidName',
    });
    await expect(
      sfn.handle('DescribeExecution', { executionArn: `${STATES_ARN}:execution:OrderSaga:nope` }),
    ).rejects.toMatchObject({ code: 'ExecutionDoesNotExist' });
    await expect(
      sfn.handle('StartExecution', { stateMachineArn: `${STATES_ARN}:stateMachine:Nope` }),
    ).rejects.toMatchObject({ code: 'StateMachineDoesNotExist' });
  });

  test('StopExecution aborts a running execution (started by logical id)', async () => {
    const { executionArn } = await sfn.startExecution(
      'OrderSaga',
      { orderId: 'o-6', quantity: 1, captureDelayMs: 800 },
      'stop-me',
    );
    expect(executionArn).toBe(`${STATES_ARN}:execution:OrderSaga:stop-me`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stopped = (await sfn.handle('StopExecution', { executionArn, error: 'Manual', cause: 'test' })) as {
      stopDate: number;
    };
    expect(typeof stopped.stopDate).toBe('number');
    const d = await finished(sfn, executionArn);
    expect(d).toMatchObject({ status: 'ABORTED', error: 'Manual', cause: 'test' });
    const events = await history(sfn, executionArn);
    expect(events.at(-1)).toMatchObject({
      type: 'ExecutionAborted',
      executionAbortedEventDetails: { error: 'Manual', cause: 'test' },
    });
    await sfn.drain();
    // The capture that was running when it stopped is not recorded after the abort.
    expect((await history(sfn, executionArn)).length).toBe(events.length);
  });

  test('stats count executions, outcomes, transitions and task attempts', () => {
    expect(sfn.stats).toEqual({
      executions: 6,
      succeeded: 3,
      failed: 3,
      stateTransitions: expect.any(Number),
      taskInvocations: expect.any(Number),
      taskFailures: expect.any(Number),
      taskRetries: expect.any(Number),
      billedExpressMs: expect.any(Number),
    });
    expect(sfn.stats.taskInvocations).toBeGreaterThanOrEqual(10);
    // The failed executions above failed in a Task; a retry is only ever of a failed attempt.
    expect(sfn.stats.taskFailures).toBeGreaterThan(0);
    expect(sfn.stats.taskRetries).toBeLessThanOrEqual(sfn.stats.taskFailures);
    // Each execution is billed at least 100 ms, in steps of 100 ms.
    expect(sfn.stats.billedExpressMs).toBeGreaterThanOrEqual(600);
    expect(sfn.stats.billedExpressMs % 100).toBe(0);
  });
});

describe('construction', () => {
  function assemblyWith(name: string, states: Record<string, unknown>) {
    return writeAssembly(join(work, name), {
      ...BASE_RESOURCES,
      Extra: {
        Type: 'AWS::StepFunctions::StateMachine',
        Properties: { DefinitionString: JSON.stringify({ StartAt: Object.keys(states)[0], States: states }) },
      },
    });
  }

  test('fails for a Task resource that is not wired locally', () => {
    const other = assemblyWith('unwired', {
      Send: {
        Type: 'Task',
        Resource: 'arn:aws:states:::sqs:sendMessage',
        Parameters: { QueueUrl: 'https://example.com/q', MessageBody: 'x' },
        End: true,
      },
    });
    expect(() => new LocalStepFunctions(other, resolver(other), runtime, () => {})).toThrow(
      /state machine Extra, state Send: Task resource arn:aws:states:::sqs:sendMessage is not wired locally/,
    );
  });

  test('fails for a function that is not in the app', () => {
    const other = assemblyWith('unknown-function', {
      Call: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke',
        Parameters: { FunctionName: 'arn:aws:lambda:us-east-1:000000000000:function:Nope', Payload: {} },
        End: true,
      },
    });
    expect(() => new LocalStepFunctions(other, resolver(other), runtime, () => {})).toThrow(
      /function arn:aws:lambda:us-east-1:000000000000:function:Nope is not a function of this app/,
    );
  });

  test('fails for a fault on a state that does not exist', () => {
    expect(() => create(parseFaults('Reserv:rate=1'))).toThrow(/no Task state of that name/);
  });

  test('parseFaults reads the spec format', () => {
    expect(
      parseFaults('ReserveStock:error=TransientError:rate=0.2,CapturePayment:delayMs=500:rate=1'),
    ).toEqual([
      { state: 'ReserveStock', error: 'TransientError', rate: 0.2 },
      { state: 'CapturePayment', delayMs: 500, rate: 1 },
    ]);
    expect(parseFaults(undefined)).toEqual([]);
    expect(() => parseFaults('X:rate=2')).toThrow(/rate/);
    expect(() => parseFaults('X:colour=red')).toThrow(/unknown field/);
  });
});
