/**
 * IAM, enforced locally: each principal's identity-based policies as the
 * template gives them (a role's AWS::IAM::Policy resources, its inline
 * `Policies`, and the AWS managed policies it names that are known here),
 * evaluated as IAM does for a call by a principal of the same account:
 * an explicit Deny wins, else an Allow allows, else the call is denied (no
 * policy allows it). Actions match case-insensitively with `*` and `?`;
 * resources match as `ArnLike` does (segment by segment, wildcards in each,
 * and a wildcard in the last segment spans its `:` and `/`); `NotAction` and
 * `NotResource` are supported. What is not supported fails loudly when the
 * policies are read (never a silent allow): a `Condition`, a policy variable
 * (`${aws:...}`), a permissions boundary, a managed policy not known here.
 *
 * This module is plain data and pure functions (no template types, no
 * Node.js APIs) so that the sandboxes can load it too: `compilePolicies`
 * makes a principal's policies into a `Principal` once; `authorize` answers
 * per (action, resource), from a cache after the first time.
 */

export interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Action?: string | readonly string[];
  readonly NotAction?: string | readonly string[];
  readonly Resource?: string | readonly string[];
  readonly NotResource?: string | readonly string[];
  readonly Condition?: unknown;
  readonly Principal?: unknown;
}

export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: PolicyStatement | readonly PolicyStatement[];
}

/** A principal's policies, resolved (no intrinsic functions left), as the sandboxes receive them. */
export interface PrincipalPolicies {
  /** The ARN IAM names in a denial, e.g. `arn:aws:sts::000000000000:assumed-role/Role/Function`. */
  readonly arn: string;
  /** Each policy's name and document, for messages. */
  readonly policies: readonly { readonly name: string; readonly document: PolicyDocument }[];
}

interface CompiledStatement {
  readonly allow: boolean;
  readonly actions: RegExp;
  readonly notAction: boolean;
  readonly resources: readonly ArnPattern[];
  readonly notResource: boolean;
}

/** An ARN pattern split as ArnLike compares: five segments, then the resource (which may hold `:`). */
type ArnPattern = { readonly any: true } | { readonly segments: readonly RegExp[] };

export type Decision = 'allowed' | 'implicitDeny' | 'explicitDeny';

export interface Principal {
  readonly arn: string;
  /** What IAM decides for `action` (e.g. `dynamodb:PutItem`) on `resource` (an ARN, or `*`). */
  decide(action: string, resource: string): Decision;
}

/** The denial AWS answers a call with: `AccessDeniedException` and IAM's own message. */
export class AccessDeniedError extends Error {
  readonly code = 'AccessDeniedException';
  readonly status = 400;
  constructor(
    readonly principalArn: string,
    readonly action: string,
    readonly resource: string,
    readonly decision: Exclude<Decision, 'allowed'>,
    /** Which policy said no: the caller's own (identity-based), or the resource's. */
    readonly basis: 'identity' | 'resource' = 'identity',
  ) {
    super(denialMessage(principalArn, action, resource, decision, basis));
    this.name = 'AccessDeniedException';
  }
}

/** IAM's message for a denied call, as AWS services report it. */
export function denialMessage(
  principalArn: string,
  action: string,
  resource: string,
  decision: Exclude<Decision, 'allowed'>,
  basis: 'identity' | 'resource' = 'identity',
): string {
  const why =
    decision === 'explicitDeny'
      ? `with an explicit deny in an ${basis === 'identity' ? 'identity' : 'resource'}-based policy`
      : `because no ${basis}-based policy allows the ${action} action`;
  return `User: ${principalArn} is not authorized to perform: ${action} on resource: ${resource} ${why}`;
}

const list = (value: string | readonly string[] | undefined): readonly string[] =>
  value === undefined ? [] : typeof value === 'string' ? [value] : value;

const escapeRegExp = (text: string) => text.replace(/[.+^${}()|[\]\\]/g, '\\$&');
/** A glob (`*` any run, `?` one character) as an anchored expression. */
const glob = (pattern: string) => escapeRegExp(pattern).replace(/\*/g, '.*').replace(/\?/g, '.');

function compileActions(actions: readonly string[], where: string): RegExp {
  for (const a of actions) {
    if (a !== '*' && !/^[a-zA-Z0-9-]+:[a-zA-Z0-9*?]+$/.test(a))
      throw new Error(`${where}: action "${a}" is not valid`);
  }
  return new RegExp(`^(?:${actions.map(glob).join('|')})$`, 'i');
}

function compileResource(resource: string, where: string): ArnPattern {
  if (resource.includes('${')) {
    throw new Error(`${where}: policy variables (${resource}) are not supported locally`);
  }
  if (resource === '*') return { any: true };
  const parts = splitArn(resource);
  if (!parts) throw new Error(`${where}: resource "${resource}" is not an ARN`);
  return { segments: parts.map((p) => new RegExp(`^${glob(p)}$`)) };
}

/** arn:partition:service:region:account:resource — the resource keeps its own `:`s. */
function splitArn(arn: string): string[] | undefined {
  const parts = arn.split(':');
  if (parts.length < 6 || parts[0] !== 'arn') return undefined;
  return [...parts.slice(0, 5), parts.slice(5).join(':')];
}

function matchesResource(pattern: ArnPattern, parts: string[] | undefined): boolean {
  if ('any' in pattern) return true;
  // `*` as the request's resource (an action on no resource, e.g. dynamodb:ListStreams) only matches `*`.
  if (!parts) return false;
  return pattern.segments.every((segment, i) => segment.test(parts[i]!));
}

function compileStatement(statement: PolicyStatement, where: string): CompiledStatement {
  if (statement.Effect !== 'Allow' && statement.Effect !== 'Deny') {
    throw new Error(`${where}: Effect must be Allow or Deny, not ${String(statement.Effect)}`);
  }
  if (statement.Condition !== undefined) {
    throw new Error(
      `${where}: conditions are not supported locally (${JSON.stringify(statement.Condition)})`,
    );
  }
  if (statement.Principal !== undefined) {
    throw new Error(`${where}: an identity-based policy names no Principal`);
  }
  const notAction = statement.NotAction !== undefined;
  const notResource = statement.NotResource !== undefined;
  if (notAction === (statement.Action !== undefined)) {
    throw new Error(`${where}: a statement has exactly one of Action and NotAction`);
  }
  if (notResource === (statement.Resource !== undefined)) {
    throw new Error(`${where}: a statement has exactly one of Resource and NotResource`);
  }
  const actions = list(notAction ? statement.NotAction : statement.Action);
  const resources = list(notResource ? statement.NotResource : statement.Resource);
  return {
    allow: statement.Effect === 'Allow',
    actions: compileActions(actions, where),
    notAction,
    resources: resources.map((r) => compileResource(r, where)),
    notResource,
  };
}

function applies(s: CompiledStatement, action: string, parts: string[] | undefined) {
  if (s.actions.test(action) === s.notAction) return false;
  const matched = s.resources.some((p) => matchesResource(p, parts));
  return matched !== s.notResource;
}

/** Decisions kept per principal at most: the (action, resource) pairs of an app are few. */
const CACHE_LIMIT = 10_000;

/** Reads a principal's policies once; throws on anything it cannot evaluate as IAM would. */
export function compilePolicies(principal: PrincipalPolicies): Principal {
  const statements: CompiledStatement[] = [];
  for (const { name, document } of principal.policies) {
    const all = Array.isArray(document.Statement)
      ? (document.Statement as readonly PolicyStatement[])
      : [document.Statement as PolicyStatement];
    all.forEach((s, i) => {
      statements.push(compileStatement(s, `policy ${name} statement ${s.Sid ?? i}`));
    });
  }
  const cache = new Map<string, Decision>();
  return {
    arn: principal.arn,
    decide(action, resource) {
      const key = `${action} ${resource}`;
      const cached = cache.get(key);
      if (cached) return cached;
      const parts = resource === '*' ? undefined : splitArn(resource);
      let decision: Decision = 'implicitDeny';
      for (const s of statements) {
        if (!applies(s, action, parts)) continue;
        if (!s.allow) {
          decision = 'explicitDeny';
          break;
        }
        decision = 'allowed';
      }
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(key, decision);
      return decision;
    },
  };
}

/** Throws AWS's AccessDeniedException unless `principal` may do `action` on every one of `resources`. */
export function authorize(principal: Principal, action: string, resources: readonly string[]) {
  for (const resource of resources) {
    const decision = principal.decide(action, resource);
    if (decision !== 'allowed') throw new AccessDeniedError(principal.arn, action, resource, decision);
  }
}

/**
 * The AWS managed policies a role may name that are known here, with the
 * statements that matter locally (what they allow of the services the local
 * cloud enforces: none of these allows DynamoDB tables, EventBridge, Step
 * Functions or SQS beyond what is listed). Any other managed policy is a
 * startup error rather than a guess.
 */
export const KNOWN_MANAGED_POLICIES: Readonly<Record<string, PolicyDocument>> = {
  'service-role/AWSLambdaBasicExecutionRole': {
    Statement: [
      {
        Effect: 'Allow',
        Action: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: '*',
      },
    ],
  },
  AWSXRayDaemonWriteAccess: {
    Statement: [
      {
        Effect: 'Allow',
        Action: [
          'xray:PutTraceSegments',
          'xray:PutTelemetryRecords',
          'xray:GetSamplingRules',
          'xray:GetSamplingTargets',
          'xray:GetSamplingStatisticSummaries',
        ],
        Resource: '*',
      },
    ],
  },
  'service-role/AWSLambdaDynamoDBExecutionRole': {
    Statement: [
      {
        Effect: 'Allow',
        Action: [
          'dynamodb:DescribeStream',
          'dynamodb:GetRecords',
          'dynamodb:GetShardIterator',
          'dynamodb:ListStreams',
          'logs:CreateLogGroup',
          'logs:CreateLogStream',
          'logs:PutLogEvents',
        ],
        Resource: '*',
      },
    ],
  },
};
