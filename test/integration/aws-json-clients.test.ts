import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { StandardRetryStrategy } from '@smithy/core/retry';
import { EventBridge } from '../../functions/shared/event-bridge';
import { StepFunctions } from '../../functions/shared/step-functions';

/**
 * The functions' Step Functions and EventBridge clients
 * (functions/shared/step-functions.ts, event-bridge.ts) hold to the SDK's:
 * for each call they make, both are sent to one server, which records each
 * request and answers both the same. They must send the same target,
 * content type and body, read the same answer into the same output, and
 * raise a refusal under the same name.
 */
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const region = 'us-east-1';
const retryStrategy = new StandardRetryStrategy({ maxAttempts: 1 });

interface Sent {
  target: string;
  contentType: string;
  body: unknown;
}

let server: Server;
let endpoint: string;
const sent: Sent[] = [];
/** What the server answers each target with: status and body. */
const answers = new Map<string, [number, object]>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target']);
      const contentType = String(req.headers['content-type']);
      sent.push({ target, contentType, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const [status, body] = answers.get(target) ?? [200, {}];
      res.writeHead(status, { 'content-type': contentType }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
/** Every client made, destroyed at the end (their kept-alive sockets would keep the server open). */
const made: { destroy(): void }[] = [];
const kept = <C extends { destroy(): void }>(client: C) => {
  made.push(client);
  return client;
};
afterAll(() => {
  for (const client of made) client.destroy();
  server.closeAllConnections();
  server.close();
});

/** Each client's output (less the SDK's `$metadata`) and the request it sent, the SDK's first. */
async function both<T>(sdk: () => Promise<{ $metadata: unknown }>, ours: () => Promise<T>) {
  sent.length = 0;
  const { $metadata: _, ...sdkOutput } = await sdk();
  const oursOutput = await ours();
  expect(sent).toHaveLength(2);
  return { sdkOutput, oursOutput, sdkSent: sent[0]!, oursSent: sent[1]! };
}

describe('Step Functions', () => {
  // Made in each test: the endpoint is known once the server listens.
  const ours = () => kept(new StepFunctions({ endpoint, region, credentials, retryStrategy }));
  const sdkClient = () => kept(new SFNClient({ endpoint, region, credentials, maxAttempts: 1 }));

  test('StartExecution: the same request, and the start date read as a Date', async () => {
    answers.set('AWSStepFunctions.StartExecution', [
      200,
      { executionArn: 'arn:aws:states:us-east-1:000000000000:execution:saga:o1', startDate: 1764460800.123 },
    ]);
    const input = {
      stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:saga',
      name: 'o1',
      input: '{"a":1}',
    };
    const r = await both(
      () => sdkClient().send(new StartExecutionCommand(input)),
      () => ours().startExecution(input),
    );
    expect(r.oursSent).toEqual(r.sdkSent);
    expect(r.oursSent).toMatchObject({
      target: 'AWSStepFunctions.StartExecution',
      contentType: 'application/x-amz-json-1.0',
    });
    expect(r.oursOutput).toEqual(r.sdkOutput);
    expect(r.oursOutput.startDate).toEqual(new Date(1764460800123));
  });

  test('DescribeExecution and GetExecutionHistory: their dates and events read as the SDK reads them', async () => {
    answers.set('AWSStepFunctions.DescribeExecution', [
      200,
      {
        executionArn: 'arn:x',
        stateMachineArn: 'arn:m',
        status: 'SUCCEEDED',
        startDate: 1764460800.5,
        stopDate: 1764460801.25,
        input: '{}',
        output: '{"ok":true}',
      },
    ]);
    answers.set('AWSStepFunctions.GetExecutionHistory', [
      200,
      {
        events: [
          {
            id: 1,
            type: 'ExecutionStarted',
            timestamp: 1764460800.5,
            executionStartedEventDetails: { input: '{}' },
          },
          {
            id: 2,
            previousEventId: 1,
            type: 'TaskStateEntered',
            timestamp: 1764460800.75,
            stateEnteredEventDetails: { name: 'ReserveStock', input: '{}' },
          },
        ],
        nextToken: 'page-2',
      },
    ]);
    const describe = await both(
      () => sdkClient().send(new DescribeExecutionCommand({ executionArn: 'arn:x' })),
      () => ours().describeExecution({ executionArn: 'arn:x' }),
    );
    expect(describe.oursSent).toEqual(describe.sdkSent);
    expect(describe.oursOutput).toEqual(describe.sdkOutput);
    const history = await both(
      () => sdkClient().send(new GetExecutionHistoryCommand({ executionArn: 'arn:x', maxResults: 1000 })),
      () => ours().getExecutionHistory({ executionArn: 'arn:x', maxResults: 1000 }),
    );
    expect(history.oursSent).toEqual(history.sdkSent);
    expect(history.oursOutput).toEqual(history.sdkOutput);
    expect(history.oursOutput.events?.[1]?.timestamp).toEqual(new Date(1764460800750));
  });

  test('a refusal has the SDK’s name, fault and status', async () => {
    answers.set('AWSStepFunctions.StartExecution', [
      400,
      {
        __type: 'com.amazonaws.swf.service.v2.model#ExecutionAlreadyExists',
        message: 'Execution Already Exists',
      },
    ]);
    const input = { stateMachineArn: 'arn:m', name: 'o1', input: '{}' };
    const sdkError = await sdkClient()
      .send(new StartExecutionCommand(input))
      .catch((e: unknown) => e);
    const oursError = await ours()
      .startExecution(input)
      .catch((e: unknown) => e);
    const shape = (e: unknown) => {
      const { name, message, $fault, $metadata } = e as Error & {
        $fault: string;
        $metadata: { httpStatusCode: number };
      };
      return { name, message, $fault, status: $metadata.httpStatusCode };
    };
    expect(shape(oursError)).toEqual(shape(sdkError));
    expect(shape(oursError)).toEqual({
      name: 'ExecutionAlreadyExists',
      message: 'Execution Already Exists',
      $fault: 'client',
      status: 400,
    });
  });
});

describe('EventBridge', () => {
  const sdkClient = () => kept(new EventBridgeClient({ endpoint, region, credentials, maxAttempts: 1 }));
  const ours = () => kept(new EventBridge({ endpoint, region, credentials, retryStrategy }));

  test('PutEvents: the same request (times as epoch seconds), and each entry’s result read the same', async () => {
    answers.set('AWSEvents.PutEvents', [
      200,
      {
        FailedEntryCount: 1,
        Entries: [{ EventId: 'e-1' }, { ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' }],
      },
    ]);
    const entries = [1, 2].map((n) => ({
      EventBusName: 'commerce',
      Source: 'commerce.orders',
      DetailType: 'OrderPlaced',
      Detail: JSON.stringify({ n }),
      Time: new Date(Date.UTC(2026, 10, 30, 8, 0, n, 250)),
    }));
    const r = await both(
      () => sdkClient().send(new PutEventsCommand({ Entries: entries })),
      () => ours().putEvents({ Entries: entries }),
    );
    expect(r.oursSent).toEqual(r.sdkSent);
    expect(r.oursSent).toMatchObject({
      target: 'AWSEvents.PutEvents',
      contentType: 'application/x-amz-json-1.1',
    });
    expect((r.oursSent.body as { Entries: { Time: number }[] }).Entries[0]!.Time).toBe(1796025601.25);
    expect(r.oursOutput).toEqual(r.sdkOutput);
  });
});
