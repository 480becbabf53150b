import { ACCOUNT, REGION } from './assembly';

/**
 * What IAM checks for one DynamoDB (or DynamoDB Streams) request: each
 * action and the resource it is checked on, as AWS documents them — the
 * table's ARN, or its index's (`table/T/index/I`) for a Query or Scan of an
 * index; a batch checks its own action (`dynamodb:BatchWriteItem`) on every
 * table; a transaction checks each item's action (`dynamodb:PutItem`,
 * `dynamodb:UpdateItem`, `dynamodb:DeleteItem`, `dynamodb:ConditionCheckItem`,
 * `dynamodb:GetItem`) on its table; an operation on no table (ListTables,
 * ListStreams) is checked on `*`. PartiQL is not mapped: it throws.
 */
export interface Authorization {
  readonly action: string;
  readonly resource: string;
}

const tableArn = (nameOrArn: string) =>
  nameOrArn.startsWith('arn:') ? nameOrArn : `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${nameOrArn}`;

const ON_NO_RESOURCE = new Set([
  'ListTables',
  'ListStreams',
  'DescribeLimits',
  'DescribeEndpoints',
  'ListBackups',
  'ListGlobalTables',
]);

const TRANSACT_WRITE_ACTIONS: Readonly<Record<string, string>> = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
};

/** A shard iterator names its stream: it begins with the stream's ARN (`<arn>|<shard>|...`), as DynamoDB's do. */
const STREAM_ARN = /arn:aws:dynamodb:[^|"\s]+?\/stream\/[0-9T:.-]+/;

export function dynamoAuthorizations(operation: string, input: Record<string, unknown>): Authorization[] {
  const action = `dynamodb:${operation}`;
  if (ON_NO_RESOURCE.has(operation)) return [{ action, resource: '*' }];
  switch (operation) {
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.keys((input.RequestItems as Record<string, unknown> | undefined) ?? {}).map((t) => ({
        action,
        resource: tableArn(t),
      }));
    case 'TransactWriteItems':
      return ((input.TransactItems as Record<string, { TableName?: string }>[] | undefined) ?? []).flatMap(
        (item) =>
          Object.entries(item).flatMap(([kind, request]) => {
            const itemAction = TRANSACT_WRITE_ACTIONS[kind];
            if (!itemAction) throw new Error(`TransactWriteItems: unknown item kind ${kind}`);
            return [{ action: itemAction, resource: tableArn(String(request.TableName)) }];
          }),
      );
    case 'TransactGetItems':
      return ((input.TransactItems as { Get?: { TableName?: string } }[] | undefined) ?? []).map((item) => ({
        action: 'dynamodb:GetItem',
        resource: tableArn(String(item.Get?.TableName)),
      }));
    case 'DescribeStream':
    case 'GetShardIterator':
      return [{ action, resource: String(input.StreamArn) }];
    case 'GetRecords': {
      const stream = STREAM_ARN.exec(String(input.ShardIterator ?? ''))?.[0];
      if (!stream)
        throw new Error('GetRecords: the shard iterator names no stream the local IAM check knows');
      return [{ action, resource: stream }];
    }
    case 'ExecuteStatement':
    case 'BatchExecuteStatement':
    case 'ExecuteTransaction':
      throw new Error(`${operation}: PartiQL is not checked by the local IAM (not supported locally)`);
    default: {
      if (typeof input.TableName !== 'string') {
        throw new Error(`${operation}: no TableName; the local IAM check does not know this operation`);
      }
      const table = tableArn(input.TableName);
      const index = input.IndexName;
      return [{ action, resource: typeof index === 'string' ? `${table}/index/${index}` : table }];
    }
  }
}

const STATE_MACHINE_OPERATIONS = new Set([
  'StartExecution',
  'StartSyncExecution',
  'ListExecutions',
  'DescribeStateMachine',
]);
const EXECUTION_OPERATIONS = new Set([
  'DescribeExecution',
  'GetExecutionHistory',
  'StopExecution',
  'DescribeStateMachineForExecution',
]);

/**
 * What IAM checks for a call to the local AWS endpoint's other services
 * (`prefix` is the `X-Amz-Target`'s service, e.g. `AWSEvents.`): Step
 * Functions' on the state machine or execution the call names, EventBridge's
 * PutEvents on each entry's bus (the default bus when it names none). An
 * operation not mapped here throws: never let through unchecked.
 */
export function endpointAuthorizations(
  prefix: string,
  operation: string,
  input: Record<string, unknown>,
): Authorization[] {
  if (prefix === 'DynamoDB_20120810.' || prefix === 'DynamoDBStreams_20120810.') {
    return dynamoAuthorizations(operation, input);
  }
  if (prefix === 'AWSStepFunctions.') {
    const action = `states:${operation}`;
    if (STATE_MACHINE_OPERATIONS.has(operation)) return [{ action, resource: String(input.stateMachineArn) }];
    if (EXECUTION_OPERATIONS.has(operation)) return [{ action, resource: String(input.executionArn) }];
    if (operation === 'ListStateMachines') return [{ action, resource: '*' }];
  }
  if (prefix === 'AWSEvents.' && operation === 'PutEvents') {
    const buses = new Set(
      ((input.Entries as { EventBusName?: string }[] | undefined) ?? []).map(
        (e) => e.EventBusName ?? 'default',
      ),
    );
    return [...buses].map((bus) => ({
      action: 'events:PutEvents',
      resource: bus.startsWith('arn:') ? bus : `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/${bus}`,
    }));
  }
  throw new Error(`${prefix}${operation} is not checked by the local IAM (not supported locally)`);
}

/** The access key id of a SigV4-signed request (`Credential=<key>/<date>/...`), or undefined. */
export function accessKeyOf(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const match = /Credential=([^/,\s]+)\//.exec(authorization);
  return match?.[1];
}
