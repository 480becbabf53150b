import { type Assembly, resolver } from '../../assembly';
import { AccessDeniedError, authorize } from '../../iam';
import { LocalPrincipals } from '../../principals';

const ACCOUNT = '000000000000';
const tableArn = (id: string) => `arn:aws:dynamodb:us-east-1:${ACCOUNT}:table/${id}`;

/** A template as CDK writes one: a function, its role, the role's default policy, a rule allowed to invoke it. */
function assembly(
  extra: Record<string, unknown> = {},
  roleProperties: Record<string, unknown> = {},
): Assembly {
  return {
    dir: '.',
    stackName: 'Test',
    template: {
      Resources: {
        Orders: { Type: 'AWS::DynamoDB::Table', Properties: {} },
        Accounts: { Type: 'AWS::DynamoDB::Table', Properties: {} },
        Sweep: { Type: 'AWS::Events::Rule', Properties: {} },
        Other: { Type: 'AWS::Events::Rule', Properties: {} },
        FnRole: {
          Type: 'AWS::IAM::Role',
          Properties: { AssumeRolePolicyDocument: { Statement: [] }, ...roleProperties },
        },
        FnRolePolicy: {
          Type: 'AWS::IAM::Policy',
          Properties: {
            PolicyName: 'FnRolePolicy',
            Roles: [{ Ref: 'FnRole' }],
            PolicyDocument: {
              Statement: [
                {
                  Effect: 'Allow',
                  Action: ['dynamodb:GetItem', 'dynamodb:PutItem'],
                  Resource: { 'Fn::GetAtt': ['Orders', 'Arn'] },
                },
              ],
            },
          },
        },
        Fn: { Type: 'AWS::Lambda::Function', Properties: { Role: { 'Fn::GetAtt': ['FnRole', 'Arn'] } } },
        FnInvokedBySweep: {
          Type: 'AWS::Lambda::Permission',
          Properties: {
            Action: 'lambda:InvokeFunction',
            FunctionName: { 'Fn::GetAtt': ['Fn', 'Arn'] },
            Principal: 'events.amazonaws.com',
            SourceArn: { 'Fn::GetAtt': ['Sweep', 'Arn'] },
          },
        },
        ...extra,
      },
    },
  } as Assembly;
}
const principalsOf = (a: Assembly) => new LocalPrincipals(a, resolver(a));

describe('the template’s roles as principals (local/principals.ts)', () => {
  test('a function is its role in a session named after it, with its role’s policies resolved', () => {
    const principals = principalsOf(assembly());
    const fn = principals.function('Fn');
    expect(fn.arn).toBe(`arn:aws:sts::${ACCOUNT}:assumed-role/FnRole/Fn`);
    expect(fn.decide('dynamodb:PutItem', tableArn('Orders'))).toBe('allowed');
    expect(fn.decide('dynamodb:PutItem', tableArn('Accounts'))).toBe('implicitDeny');
    expect(() => authorize(fn, 'dynamodb:DeleteItem', [tableArn('Orders')])).toThrow(AccessDeniedError);
    // What the sandbox receives is plain data with the same policies.
    expect(JSON.parse(JSON.stringify(principals.functionPolicies('Fn'))).policies[0].name).toBe(
      'FnRolePolicy',
    );
  });

  test('inline policies and known managed policies add up; an unknown managed policy fails the start', () => {
    const withInline = principalsOf(
      assembly(
        {},
        {
          Policies: [
            {
              PolicyName: 'Inline',
              PolicyDocument: { Statement: [{ Effect: 'Allow', Action: 'dynamodb:Query', Resource: '*' }] },
            },
          ],
          ManagedPolicyArns: [
            {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  ':iam::aws:policy/service-role/AWSLambdaBasicExecutionRole',
                ],
              ],
            },
          ],
        },
      ),
    );
    expect(withInline.function('Fn').decide('dynamodb:Query', tableArn('Accounts'))).toBe('allowed');
    expect(
      withInline.function('Fn').decide('logs:PutLogEvents', 'arn:aws:logs:us-east-1:0:log-group:x'),
    ).toBe('allowed');
    expect(() =>
      principalsOf(assembly({}, { ManagedPolicyArns: ['arn:aws:iam::aws:policy/AdministratorAccess'] })),
    ).toThrow(/not known locally/);
  });

  test('what cannot be evaluated fails the start: a condition, a permissions boundary', () => {
    expect(() =>
      principalsOf(
        assembly({
          Cond: {
            Type: 'AWS::IAM::Policy',
            Properties: {
              PolicyName: 'Cond',
              Roles: [{ Ref: 'FnRole' }],
              PolicyDocument: {
                Statement: [
                  {
                    Effect: 'Allow',
                    Action: 'dynamodb:Scan',
                    Resource: '*',
                    Condition: { Bool: { 'aws:SecureTransport': 'true' } },
                  },
                ],
              },
            },
          },
        }),
      ),
    ).toThrow(/conditions are not supported/);
    expect(() => principalsOf(assembly({}, { PermissionsBoundary: 'arn:aws:iam::0:policy/b' }))).toThrow(
      /permissions boundaries/,
    );
  });

  test('a service may invoke a function only as its resource policy allows, from the source it names', () => {
    const principals = principalsOf(assembly());
    const sweep = `arn:aws:events:us-east-1:${ACCOUNT}:rule/Sweep`;
    expect(() => principals.authorizeServiceInvoke('Fn', 'events.amazonaws.com', sweep)).not.toThrow();
    expect(() =>
      principals.authorizeServiceInvoke(
        'Fn',
        'events.amazonaws.com',
        `arn:aws:events:us-east-1:${ACCOUNT}:rule/Other`,
      ),
    ).toThrow(
      `User: events.amazonaws.com is not authorized to perform: lambda:InvokeFunction on resource: arn:aws:lambda:us-east-1:${ACCOUNT}:function:Fn because no resource-based policy allows the lambda:InvokeFunction action`,
    );
    expect(() => principals.authorizeServiceInvoke('Fn', 'sns.amazonaws.com', sweep)).toThrow(
      AccessDeniedError,
    );
  });

  test('a service’s role (a state machine’s, a rule target’s) is found by its ARN', () => {
    const principals = principalsOf(assembly());
    const roleId = principals.roleIdOf(`arn:aws:iam::${ACCOUNT}:role/FnRole`, 'test');
    expect(principals.role(roleId, 'Saga').arn).toBe(`arn:aws:sts::${ACCOUNT}:assumed-role/FnRole/Saga`);
    expect(() => principals.roleIdOf(`arn:aws:iam::${ACCOUNT}:role/Nope`, 'test')).toThrow(
      /not a role of the template/,
    );
  });
});
