import { accessKeyOf, dynamoAuthorizations, endpointAuthorizations } from '../../iam-actions';

const table = (name: string) => `arn:aws:dynamodb:us-east-1:000000000000:table/${name}`;

describe('what IAM checks for each call (local/iam-actions.ts)', () => {
  test('an item operation: its own action on its table', () => {
    expect(dynamoAuthorizations('PutItem', { TableName: 'Orders', Item: {} })).toEqual([
      { action: 'dynamodb:PutItem', resource: table('Orders') },
    ]);
    expect(dynamoAuthorizations('GetItem', { TableName: table('Orders') })).toEqual([
      { action: 'dynamodb:GetItem', resource: table('Orders') },
    ]);
  });

  test('a Query or Scan of an index: on the index ARN', () => {
    expect(dynamoAuthorizations('Query', { TableName: 'Orders', IndexName: 'byDeadline' })).toEqual([
      { action: 'dynamodb:Query', resource: `${table('Orders')}/index/byDeadline` },
    ]);
  });

  test('a batch: its own action on every table; a transaction: each item’s action on its table', () => {
    expect(dynamoAuthorizations('BatchGetItem', { RequestItems: { A: {}, B: {} } })).toEqual([
      { action: 'dynamodb:BatchGetItem', resource: table('A') },
      { action: 'dynamodb:BatchGetItem', resource: table('B') },
    ]);
    expect(
      dynamoAuthorizations('TransactWriteItems', {
        TransactItems: [
          { Put: { TableName: 'A' } },
          { Update: { TableName: 'B' } },
          { Delete: { TableName: 'A' } },
          { ConditionCheck: { TableName: 'C' } },
        ],
      }),
    ).toEqual([
      { action: 'dynamodb:PutItem', resource: table('A') },
      { action: 'dynamodb:UpdateItem', resource: table('B') },
      { action: 'dynamodb:DeleteItem', resource: table('A') },
      { action: 'dynamodb:ConditionCheckItem', resource: table('C') },
    ]);
    expect(
      dynamoAuthorizations('TransactGetItems', { TransactItems: [{ Get: { TableName: 'A' } }] }),
    ).toEqual([{ action: 'dynamodb:GetItem', resource: table('A') }]);
  });

  test('streams and operations on no table', () => {
    const stream = 'arn:aws:dynamodb:us-east-1:000000000000:table/Orders/stream/2026-11-23T14:00:00.000';
    expect(dynamoAuthorizations('ListTables', {})).toEqual([
      { action: 'dynamodb:ListTables', resource: '*' },
    ]);
    expect(dynamoAuthorizations('DescribeStream', { StreamArn: stream })).toEqual([
      { action: 'dynamodb:DescribeStream', resource: stream },
    ]);
    expect(
      dynamoAuthorizations('GetRecords', {
        ShardIterator: `${stream}|001|c2hhcmRJZC0wMDAwMDAwMTc5NTQ0NDg2NDMzOS1iYTljOTVkZHwwMDA=`,
      }),
    ).toEqual([{ action: 'dynamodb:GetRecords', resource: stream }]);
  });

  test('what it cannot map fails loudly rather than pass unchecked', () => {
    expect(() => dynamoAuthorizations('ExecuteStatement', { Statement: 'SELECT * FROM Orders' })).toThrow(
      /PartiQL/,
    );
    expect(() => dynamoAuthorizations('SomethingNew', {})).toThrow(/does not know/);
    expect(() => endpointAuthorizations('AWSStepFunctions.', 'CreateStateMachine', {})).toThrow(
      /not checked/,
    );
    expect(() => endpointAuthorizations('AWSEvents.', 'PutRule', {})).toThrow(/not checked/);
  });

  test('Step Functions on the machine or execution named; PutEvents on each entry’s bus', () => {
    const machine = 'arn:aws:states:us-east-1:000000000000:stateMachine:Saga';
    const execution = 'arn:aws:states:us-east-1:000000000000:execution:Saga:1';
    expect(
      endpointAuthorizations('AWSStepFunctions.', 'StartExecution', { stateMachineArn: machine }),
    ).toEqual([{ action: 'states:StartExecution', resource: machine }]);
    expect(
      endpointAuthorizations('AWSStepFunctions.', 'GetExecutionHistory', { executionArn: execution }),
    ).toEqual([{ action: 'states:GetExecutionHistory', resource: execution }]);
    expect(
      endpointAuthorizations('AWSEvents.', 'PutEvents', {
        Entries: [{ EventBusName: 'Bus' }, { EventBusName: 'Bus' }, {}],
      }),
    ).toEqual([
      { action: 'events:PutEvents', resource: 'arn:aws:events:us-east-1:000000000000:event-bus/Bus' },
      { action: 'events:PutEvents', resource: 'arn:aws:events:us-east-1:000000000000:event-bus/default' },
    ]);
  });

  test('the caller is the access key of the SigV4 signature', () => {
    expect(
      accessKeyOf(
        'AWS4-HMAC-SHA256 Credential=OrdersApiFunction/20261123/us-east-1/states/aws4_request, SignedHeaders=host, Signature=abc',
      ),
    ).toBe('OrdersApiFunction');
    expect(accessKeyOf(undefined)).toBeUndefined();
    expect(accessKeyOf('Bearer token')).toBeUndefined();
  });
});
