import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import {
  CACHE_DIR,
  type LocalProcess,
  readAssembly,
  resourcesOfType,
  startLocalProcess,
  type Template,
} from '@commerce/local-cloud';
import { awsEndpoint, withDefaults } from '../support/api';

/**
 * IAM enforced locally: a call outside its function's role fails as on AWS.
 * The suite's own cloud (started by global-setup from the real template)
 * runs every other integration test with enforcement on, so every call the
 * app makes is allowed by its role; here a second cloud runs a copy of that
 * assembly with grants taken out, and the calls they allowed fail.
 */
const SUITE_ASSEMBLY = join(CACHE_DIR, 'assembly-test');
const ASSEMBLY = join(CACHE_DIR, 'assembly-iam-missing-grants');
const ACCOUNT = '000000000000';

type Statement = { Action: string | string[]; Resource: unknown };
type PolicyProperties = { PolicyDocument: { Statement: Statement[] }; Roles: { Ref: string }[] };

const logicalId = (template: Template, type: string, prefix: string) => {
  const found = resourcesOfType(template, type).filter(([id]) => id.startsWith(prefix));
  if (found.length !== 1) throw new Error(`expected one ${type} named ${prefix}*, found ${found.length}`);
  return found[0]![0];
};
const policyOf = (template: Template, roleId: string) =>
  resourcesOfType(template, 'AWS::IAM::Policy')
    .map(([, r]) => r.Properties as unknown as PolicyProperties)
    .find((p) => p.Roles.some((r) => r.Ref === roleId))!;
const mentions = (value: unknown, id: string) => JSON.stringify(value).includes(`"${id}"`);

let cloud: LocalProcess;
let template: Template;
let ids: Record<
  'paymentsApi' | 'paymentsApiRole' | 'paymentsTable' | 'machine' | 'machineRole' | 'sagaSteps',
  string
>;

beforeAll(async () => {
  // The suite's assembly is synthesized (and stamped) by global-setup: the copy starts without a synth.
  if (!existsSync(join(SUITE_ASSEMBLY, 'manifest.json')))
    throw new Error(`${SUITE_ASSEMBLY} is not synthesized`);
  rmSync(ASSEMBLY, { recursive: true, force: true });
  cpSync(SUITE_ASSEMBLY, ASSEMBLY, { recursive: true });
  const assembly = readAssembly(ASSEMBLY);
  template = assembly.template;
  const paymentsApi = logicalId(template, 'AWS::Lambda::Function', 'PaymentsApiFunction');
  const paymentsApiRole = logicalId(template, 'AWS::IAM::Role', 'PaymentsApiRole');
  const paymentsTable = logicalId(template, 'AWS::DynamoDB::Table', 'PaymentsEventsTable');
  const machineRole = logicalId(template, 'AWS::IAM::Role', 'SagaStateMachineRole');
  const machine = logicalId(template, 'AWS::StepFunctions::StateMachine', 'SagaStateMachine');
  const sagaSteps = logicalId(template, 'AWS::Lambda::Function', 'SagaStepsFunction');
  ids = { paymentsApi, paymentsApiRole, paymentsTable, machine, machineRole, sagaSteps };

  // 1. The payments API's role loses its grant on the payments event table.
  const apiPolicy = policyOf(template, paymentsApiRole);
  const before = apiPolicy.PolicyDocument.Statement.length;
  apiPolicy.PolicyDocument.Statement = apiPolicy.PolicyDocument.Statement.filter(
    (s) => !mentions(s.Resource, paymentsTable),
  );
  expect(apiPolicy.PolicyDocument.Statement.length).toBe(before - 1);
  // 2. The saga's role may no longer invoke its steps' function.
  const machinePolicy = policyOf(template, machineRole);
  const statements = machinePolicy.PolicyDocument.Statement.length;
  machinePolicy.PolicyDocument.Statement = machinePolicy.PolicyDocument.Statement.filter(
    (s) => !(s.Action === 'lambda:InvokeFunction' && mentions(s.Resource, sagaSteps)),
  );
  expect(machinePolicy.PolicyDocument.Statement.length).toBe(statements - 1);

  const manifest = JSON.parse(readFileSync(join(ASSEMBLY, 'manifest.json'), 'utf8')) as {
    artifacts: Record<string, { type: string; properties?: { templateFile?: string } }>;
  };
  const stack = Object.values(manifest.artifacts).find((a) => a.type === 'aws:cloudformation:stack')!;
  writeFileSync(join(ASSEMBLY, stack.properties!.templateFile!), JSON.stringify(template, null, 1));
  cloud = await startLocalProcess(['--port', '0', '--assembly-dir', ASSEMBLY]);
}, 240_000);

afterAll(async () => {
  await cloud?.stop();
  rmSync(ASSEMBLY, { recursive: true, force: true });
});

const request = async (method: string, path: string, body?: unknown) => {
  // As this cloud's operator (its own issuer), with an Idempotency-Key where the contract requires one.
  const headers = await withDefaults(method, path, {}, cloud.awsEndpoint);
  const response = await fetch(`${cloud.apiUrl}${path}`, {
    method,
    ...(body === undefined
      ? { headers }
      : { body: JSON.stringify(body), headers: { ...headers, 'content-type': 'application/json' } }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

const logLines = (functionId: string) => {
  const file = join(CACHE_DIR, 'run', 'assembly-iam-missing-grants', 'logs', `${functionId}.log`);
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n') : [];
};

describe('IAM enforced locally', () => {
  test('a DynamoDB call outside the function’s role fails with AccessDeniedException, as on AWS', async () => {
    // With its grant (the suite's cloud) an unknown payment is a 404; without it the read itself is refused.
    const response = await request('GET', '/payments/pay_00000000000000000000000000000000');
    expect(response.status).toBe(500);
    const denial = logLines(ids.paymentsApi)
      .filter((line) => line.includes('request failed'))
      .map((line) => (JSON.parse(line) as { error: { name: string; message: string } }).error)
      .at(-1);
    expect(denial?.name).toBe('AccessDeniedException');
    expect(denial?.message).toMatch(
      new RegExp(
        `^User: arn:aws:sts::${ACCOUNT}:assumed-role/${ids.paymentsApiRole}/${ids.paymentsApi} is not authorized to perform: (dynamodb:\\w+) on resource: arn:aws:dynamodb:us-east-1:${ACCOUNT}:table/${ids.paymentsTable} because no identity-based policy allows the \\1 action$`,
      ),
    );
  });

  test('a Task the state machine’s role may not invoke fails with Lambda.AWSLambdaException', async () => {
    const customer = await request('POST', '/customers', { name: 'Iam', email: 'iam@example.com' });
    const product = await request('POST', '/products', {
      sku: 'IAM-1',
      name: 'Iam',
      priceCents: 100,
      stock: 5,
    });
    expect([customer.status, product.status]).toEqual([201, 201]);
    const placed = await request('POST', '/orders', {
      customerId: customer.body.customerId,
      items: [{ productId: product.body.productId, quantity: 1 }],
    });
    expect(placed.status).toBe(202);
    // The saga's history (read as the account's administrator: this client signs with no function's key).
    const sfn = new SFNClient({
      endpoint: cloud.awsEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const stateMachineArn = `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:${ids.machine}`;
    let failure: { error?: string; cause?: string } | undefined;
    for (let i = 0; i < 100 && !failure; i++) {
      const { executions = [] } = await sfn.send(new ListExecutionsCommand({ stateMachineArn }));
      for (const execution of executions) {
        const { events = [] } = await sfn.send(
          new GetExecutionHistoryCommand({ executionArn: execution.executionArn! }),
        );
        failure ??= events.find((e) => e.type === 'TaskFailed')?.taskFailedEventDetails;
      }
      if (!failure) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(failure?.error).toBe('Lambda.AWSLambdaException');
    expect(failure?.cause).toMatch(
      new RegExp(
        `^User: arn:aws:sts::${ACCOUNT}:assumed-role/${ids.machineRole}/${ids.machine} is not authorized to perform: lambda:InvokeFunction on resource: arn:aws:lambda:us-east-1:${ACCOUNT}:function:${ids.sagaSteps} because no identity-based policy allows the lambda:InvokeFunction action \\(Service: AWSLambda; Status Code: 403; Error Code: AccessDeniedException; Request ID: [0-9a-f-]+; Proxy: null\\)$`,
      ),
    );
  });
});

describe('IAM at the local AWS endpoint (the suite’s cloud, the real template)', () => {
  // Each sandbox signs with its function's logical id as access key; signed so, a call is that function's.
  const suiteTemplate = () => readAssembly(SUITE_ASSEMBLY).template;
  const credentialsOf = (functionId: string) => ({ accessKeyId: functionId, secretAccessKey: 'local' });
  const clientConfig = (functionId: string) => ({
    endpoint: awsEndpoint(),
    region: 'us-east-1',
    credentials: credentialsOf(functionId),
    maxAttempts: 1,
  });

  test('Step Functions and EventBridge refuse a function what its role does not allow', async () => {
    const t = suiteTemplate();
    const paymentsApi = logicalId(t, 'AWS::Lambda::Function', 'PaymentsApiFunction');
    const ordersApi = logicalId(t, 'AWS::Lambda::Function', 'OrdersApiFunction');
    const machine = logicalId(t, 'AWS::StepFunctions::StateMachine', 'SagaStateMachine');
    const bus = logicalId(t, 'AWS::Events::EventBus', 'OutboxBus');
    const machineArn = `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:${machine}`;

    const asPayments = new SFNClient(clientConfig(paymentsApi));
    await expect(
      asPayments.send(new StartExecutionCommand({ stateMachineArn: machineArn, input: '{}' })),
    ).rejects.toMatchObject({
      name: 'AccessDeniedException',
      $metadata: { httpStatusCode: 400 },
      message: expect.stringMatching(
        new RegExp(
          `^User: arn:aws:sts::${ACCOUNT}:assumed-role/PaymentsApiRole\\w+/${paymentsApi} is not authorized to perform: states:StartExecution on resource: ${machineArn} because no identity-based policy allows the states:StartExecution action$`,
        ),
      ),
    });
    const events = new EventBridgeClient(clientConfig(paymentsApi));
    await expect(
      events.send(
        new PutEventsCommand({
          Entries: [{ EventBusName: bus, Source: 'test.iam', DetailType: 'Nothing', Detail: '{}' }],
        }),
      ),
    ).rejects.toMatchObject({ name: 'AccessDeniedException' });

    // The orders API may describe the saga's executions: the call passes IAM (and finds none of this name).
    const asOrders = new SFNClient(clientConfig(ordersApi));
    await expect(
      asOrders.send(
        new DescribeExecutionCommand({
          executionArn: `arn:aws:states:us-east-1:${ACCOUNT}:execution:${machine}:none`,
        }),
      ),
    ).rejects.toMatchObject({ name: 'ExecutionDoesNotExist' });
    // …but not another state machine's.
    await expect(
      asOrders.send(
        new DescribeExecutionCommand({
          executionArn: `arn:aws:states:us-east-1:${ACCOUNT}:execution:Other:none`,
        }),
      ),
    ).rejects.toMatchObject({ name: 'AccessDeniedException' });
  });
});
