import {
  AccessDeniedError,
  authorize,
  compilePolicies,
  type PolicyStatement,
  type Principal,
} from '../../iam';

const PRINCIPAL = 'arn:aws:sts::000000000000:assumed-role/ApiRole/ApiFunction';
const TABLE = 'arn:aws:dynamodb:us-east-1:000000000000:table/Orders';
const OTHER_TABLE = 'arn:aws:dynamodb:us-east-1:000000000000:table/Accounts';

const principal = (...statements: PolicyStatement[]): Principal =>
  compilePolicies({ arn: PRINCIPAL, policies: [{ name: 'Policy', document: { Statement: statements } }] });

describe('IAM evaluation (local/iam.ts)', () => {
  test('denies by default: no statement, no access', () => {
    expect(principal().decide('dynamodb:GetItem', TABLE)).toBe('implicitDeny');
  });

  test('allows an action on a resource a statement names, and only that', () => {
    const p = principal({
      Effect: 'Allow',
      Action: ['dynamodb:GetItem', 'dynamodb:PutItem'],
      Resource: TABLE,
    });
    expect(p.decide('dynamodb:GetItem', TABLE)).toBe('allowed');
    expect(p.decide('dynamodb:PutItem', TABLE)).toBe('allowed');
    expect(p.decide('dynamodb:DeleteItem', TABLE)).toBe('implicitDeny');
    expect(p.decide('dynamodb:GetItem', OTHER_TABLE)).toBe('implicitDeny');
  });

  test('matches actions case-insensitively, with * and ? wildcards', () => {
    const p = principal(
      { Effect: 'Allow', Action: 'dynamodb:Get*', Resource: TABLE },
      { Effect: 'Allow', Action: 'states:Describe?xecution', Resource: '*' },
      { Effect: 'Allow', Action: 'events:*', Resource: '*' },
    );
    expect(p.decide('dynamodb:GetItem', TABLE)).toBe('allowed');
    expect(p.decide('DynamoDB:getitem', TABLE)).toBe('allowed');
    expect(p.decide('dynamodb:GetRecords', TABLE)).toBe('allowed');
    expect(p.decide('dynamodb:BatchGetItem', TABLE)).toBe('implicitDeny');
    expect(p.decide('states:DescribeExecution', 'arn:aws:states:us-east-1:000000000000:execution:M:1')).toBe(
      'allowed',
    );
    expect(p.decide('events:PutEvents', 'arn:aws:events:us-east-1:000000000000:event-bus/Bus')).toBe(
      'allowed',
    );
    // A wildcard covers one service only.
    expect(p.decide('sqs:SendMessage', 'arn:aws:sqs:us-east-1:000000000000:Q')).toBe('implicitDeny');
  });

  test('a table ARN does not cover its indexes or streams; a wildcard does', () => {
    const index = `${TABLE}/index/byDeadline`;
    expect(
      principal({ Effect: 'Allow', Action: 'dynamodb:Query', Resource: TABLE }).decide(
        'dynamodb:Query',
        index,
      ),
    ).toBe('implicitDeny');
    const p = principal({ Effect: 'Allow', Action: 'dynamodb:Query', Resource: `${TABLE}/index/*` });
    expect(p.decide('dynamodb:Query', index)).toBe('allowed');
    expect(p.decide('dynamodb:Query', TABLE)).toBe('implicitDeny');
  });

  test('matches ARNs segment by segment (ArnLike), the last segment spanning : and /', () => {
    const p = principal(
      {
        Effect: 'Allow',
        Action: 'states:DescribeExecution',
        Resource: 'arn:aws:states:*:000000000000:execution:Saga:*',
      },
      {
        Effect: 'Allow',
        Action: 'lambda:InvokeFunction',
        Resource: 'arn:aws:lambda:us-east-1:000000000000:function:Fn:*',
      },
    );
    expect(
      p.decide('states:DescribeExecution', 'arn:aws:states:us-east-1:000000000000:execution:Saga:abc'),
    ).toBe('allowed');
    expect(
      p.decide('states:DescribeExecution', 'arn:aws:states:us-east-1:000000000000:execution:Other:abc'),
    ).toBe('implicitDeny');
    // Another account does not match, even with a wildcard region.
    expect(
      p.decide('states:DescribeExecution', 'arn:aws:states:us-east-1:111111111111:execution:Saga:abc'),
    ).toBe('implicitDeny');
    expect(p.decide('lambda:InvokeFunction', 'arn:aws:lambda:us-east-1:000000000000:function:Fn:live')).toBe(
      'allowed',
    );
    // `Fn:*` is not the unqualified function.
    expect(p.decide('lambda:InvokeFunction', 'arn:aws:lambda:us-east-1:000000000000:function:Fn')).toBe(
      'implicitDeny',
    );
    // `*` matches `?`-free text only as a glob: a dot is a dot.
    expect(
      principal({
        Effect: 'Allow',
        Action: 'dynamodb:GetItem',
        Resource: 'arn:aws:dynamodb:us-east-1:000000000000:table/a.b',
      }).decide('dynamodb:GetItem', 'arn:aws:dynamodb:us-east-1:000000000000:table/aXb'),
    ).toBe('implicitDeny');
  });

  test('an explicit Deny wins over any Allow, in whichever order', () => {
    const allow: PolicyStatement = { Effect: 'Allow', Action: 'dynamodb:*', Resource: '*' };
    const deny: PolicyStatement = { Effect: 'Deny', Action: 'dynamodb:DeleteItem', Resource: TABLE };
    for (const p of [principal(allow, deny), principal(deny, allow)]) {
      expect(p.decide('dynamodb:DeleteItem', TABLE)).toBe('explicitDeny');
      expect(p.decide('dynamodb:DeleteItem', OTHER_TABLE)).toBe('allowed');
      expect(p.decide('dynamodb:PutItem', TABLE)).toBe('allowed');
    }
  });

  test('statements of several policies add up', () => {
    const p = compilePolicies({
      arn: PRINCIPAL,
      policies: [
        {
          name: 'A',
          document: { Statement: { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: TABLE } },
        },
        {
          name: 'B',
          document: { Statement: [{ Effect: 'Deny', Action: 'dynamodb:GetItem', Resource: OTHER_TABLE }] },
        },
      ],
    });
    expect(p.decide('dynamodb:GetItem', TABLE)).toBe('allowed');
    expect(p.decide('dynamodb:GetItem', OTHER_TABLE)).toBe('explicitDeny');
  });

  test('NotAction and NotResource match everything but what they name', () => {
    const p = principal(
      { Effect: 'Allow', NotAction: 'dynamodb:Delete*', Resource: TABLE },
      { Effect: 'Deny', Action: 'dynamodb:PutItem', NotResource: TABLE },
      { Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: '*' },
    );
    expect(p.decide('dynamodb:PutItem', TABLE)).toBe('allowed');
    expect(p.decide('dynamodb:DeleteItem', TABLE)).toBe('implicitDeny');
    expect(p.decide('dynamodb:PutItem', OTHER_TABLE)).toBe('explicitDeny');
  });

  test('an action on no resource (`*`) is allowed only by Resource "*"', () => {
    const p = principal(
      { Effect: 'Allow', Action: 'dynamodb:ListStreams', Resource: TABLE },
      { Effect: 'Allow', Action: 'dynamodb:ListTables', Resource: '*' },
    );
    expect(p.decide('dynamodb:ListStreams', '*')).toBe('implicitDeny');
    expect(p.decide('dynamodb:ListTables', '*')).toBe('allowed');
  });

  test('fails loudly on what it does not evaluate: conditions, policy variables, bad statements', () => {
    expect(() =>
      principal({
        Effect: 'Allow',
        Action: 'dynamodb:GetItem',
        Resource: TABLE,
        Condition: { Bool: { 'aws:SecureTransport': 'true' } },
      }),
    ).toThrow(/conditions are not supported/);
    expect(() =>
      principal({ Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: `${TABLE}/\${aws:username}` }),
    ).toThrow(/policy variables/);
    expect(() => principal({ Effect: 'Allow', Resource: TABLE })).toThrow(/Action and NotAction/);
    expect(() => principal({ Effect: 'Allow', Action: 'dynamodb:GetItem' })).toThrow(
      /Resource and NotResource/,
    );
    expect(() => principal({ Effect: 'Allow', Action: 'GetItem', Resource: TABLE })).toThrow(/not valid/);
    expect(() => principal({ Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: 'Orders' })).toThrow(
      /not an ARN/,
    );
  });

  test('authorize answers as AWS does: AccessDeniedException with IAM’s message', () => {
    const p = principal(
      { Effect: 'Allow', Action: 'dynamodb:*', Resource: TABLE },
      { Effect: 'Deny', Action: 'dynamodb:DeleteItem', Resource: TABLE },
    );
    expect(() => authorize(p, 'dynamodb:PutItem', [TABLE])).not.toThrow();
    let denied: unknown;
    try {
      authorize(p, 'dynamodb:PutItem', [TABLE, OTHER_TABLE]);
    } catch (error) {
      denied = error;
    }
    expect(denied).toBeInstanceOf(AccessDeniedError);
    expect((denied as AccessDeniedError).code).toBe('AccessDeniedException');
    expect((denied as AccessDeniedError).message).toBe(
      `User: ${PRINCIPAL} is not authorized to perform: dynamodb:PutItem on resource: ${OTHER_TABLE} because no identity-based policy allows the dynamodb:PutItem action`,
    );
    expect(() => authorize(p, 'dynamodb:DeleteItem', [TABLE])).toThrow(
      `User: ${PRINCIPAL} is not authorized to perform: dynamodb:DeleteItem on resource: ${TABLE} with an explicit deny in an identity-based policy`,
    );
  });

  test('a decision, once made, is the same from the cache', () => {
    const p = principal({ Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: TABLE });
    for (let i = 0; i < 3; i++) {
      expect(p.decide('dynamodb:GetItem', TABLE)).toBe('allowed');
      expect(p.decide('dynamodb:GetItem', OTHER_TABLE)).toBe('implicitDeny');
    }
  });
});
