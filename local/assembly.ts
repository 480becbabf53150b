import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Reads a synthesized cloud assembly (cdk.out): the stack's template and
 * where each function's bundle is. The local cloud is driven by this alone,
 * so it runs exactly what `cdk deploy` would deploy.
 */
export const REGION = 'us-east-1';
export const ACCOUNT = '000000000000';

export interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
}

export interface Template {
  readonly Resources: Record<string, Resource>;
}

export interface Assembly {
  readonly dir: string;
  readonly stackName: string;
  readonly template: Template;
}

export function readAssembly(dir: string): Assembly {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
    artifacts: Record<string, { type: string; properties?: { templateFile?: string } }>;
  };
  const stacks = Object.entries(manifest.artifacts).filter(([, a]) => a.type === 'aws:cloudformation:stack');
  if (stacks.length !== 1) {
    throw new Error(
      `expected one stack in ${dir}, found ${stacks.map(([name]) => name).join(', ') || 'none'}`,
    );
  }
  const [stackName, artifact] = stacks[0]!;
  const template = JSON.parse(
    readFileSync(join(dir, artifact.properties!.templateFile!), 'utf8'),
  ) as Template;
  return { dir, stackName, template };
}

export const resourcesOfType = (template: Template, type: string) =>
  Object.entries(template.Resources).filter(([, r]) => r.Type === type);

/** Local physical names: the logical id, which is unique in the stack. */
export function physicalId(logicalId: string, resource: Resource): string {
  switch (resource.Type) {
    case 'AWS::SQS::Queue':
      return `http://127.0.0.1/${ACCOUNT}/${logicalId}`;
    // Ref of these is their ARN.
    case 'AWS::StepFunctions::StateMachine':
    case 'AWS::SNS::Topic':
      return arnOf(logicalId, resource);
    default:
      return logicalId;
  }
}

export function arnOf(logicalId: string, resource: Resource): string {
  const prefix = `arn:aws`;
  switch (resource.Type) {
    case 'AWS::DynamoDB::Table':
      return `${prefix}:dynamodb:${REGION}:${ACCOUNT}:table/${logicalId}`;
    case 'AWS::Lambda::Function':
      return `${prefix}:lambda:${REGION}:${ACCOUNT}:function:${logicalId}`;
    case 'AWS::Events::EventBus':
      return `${prefix}:events:${REGION}:${ACCOUNT}:event-bus/${logicalId}`;
    case 'AWS::Events::Rule':
      return `${prefix}:events:${REGION}:${ACCOUNT}:rule/${logicalId}`;
    case 'AWS::SQS::Queue':
      return `${prefix}:sqs:${REGION}:${ACCOUNT}:${logicalId}`;
    case 'AWS::SNS::Topic':
      return `${prefix}:sns:${REGION}:${ACCOUNT}:${logicalId}`;
    case 'AWS::StepFunctions::StateMachine':
      return `${prefix}:states:${REGION}:${ACCOUNT}:stateMachine:${logicalId}`;
    case 'AWS::IAM::Role':
      return `${prefix}:iam::${ACCOUNT}:role/${logicalId}`;
    case 'AWS::Logs::LogGroup':
      return `${prefix}:logs:${REGION}:${ACCOUNT}:log-group:${logicalId}:*`;
    case 'AWS::Cognito::UserPool':
      return `${prefix}:cognito-idp:${REGION}:${ACCOUNT}:userpool/${logicalId}`;
    default:
      return `${prefix}:local:${REGION}:${ACCOUNT}:${logicalId}`;
  }
}

/**
 * Resolves CloudFormation intrinsics (Ref, Fn::GetAtt, Fn::Join, Fn::Sub,
 * Fn::Select, Fn::Split) to local values. Anything it cannot resolve is a
 * startup error: a half-resolved value would send a call somewhere wrong.
 */
export function resolver(assembly: Assembly, streamArns: ReadonlyMap<string, string> = new Map()) {
  const { Resources } = assembly.template;
  const pseudo: Record<string, string> = {
    'AWS::Region': REGION,
    'AWS::AccountId': ACCOUNT,
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': assembly.stackName,
    'AWS::NoValue': '',
  };
  const resource = (id: string) => {
    const r = Resources[id];
    if (!r) throw new Error(`template refers to unknown resource ${id}`);
    return r;
  };
  const ref = (id: string) => pseudo[id] ?? physicalId(id, resource(id));
  const getAtt = (id: string, attribute: string): string => {
    const r = resource(id);
    switch (attribute) {
      case 'Arn':
        return arnOf(id, r);
      case 'StreamArn': {
        const arn = streamArns.get(id);
        if (!arn) throw new Error(`table ${id} has no stream`);
        return arn;
      }
      case 'Name':
      case 'QueueName':
      case 'TopicName':
        return id;
      case 'QueueUrl':
        return physicalId(id, r);
      // A Cognito user pool (the local cloud stands in for it as the issuer: see local/auth) and its client.
      case 'ProviderName':
        return `cognito-idp.${REGION}.amazonaws.com/${id}`;
      case 'ProviderURL':
        return `https://cognito-idp.${REGION}.amazonaws.com/${id}`;
      case 'UserPoolId':
      case 'ClientId':
        return id;
      default:
        throw new Error(`Fn::GetAtt ${id}.${attribute} is not supported locally`);
    }
  };

  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1) {
      const [key, arg] = entries[0]!;
      switch (key) {
        case 'Ref':
          return ref(String(arg));
        case 'Fn::GetAtt': {
          const [id, attribute] = Array.isArray(arg) ? arg : String(arg).split('.');
          return getAtt(String(id), String(attribute));
        }
        case 'Fn::Join': {
          const [separator, parts] = arg as [string, unknown[]];
          return (resolve(parts) as unknown[]).join(separator);
        }
        case 'Fn::Select': {
          const [index, list] = arg as [number, unknown];
          return (resolve(list) as unknown[])[Number(resolve(index))];
        }
        case 'Fn::Split': {
          const [separator, source] = arg as [string, unknown];
          return String(resolve(source)).split(separator);
        }
        case 'Fn::Sub': {
          const [text, variables] = (Array.isArray(arg) ? arg : [arg, {}]) as [
            string,
            Record<string, unknown>,
          ];
          return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
            if (name in variables) return String(resolve(variables[name]));
            const [id, attribute] = name.split('.');
            return attribute ? getAtt(id!, attribute) : ref(id!);
          });
        }
        default:
          if (key.startsWith('Fn::')) throw new Error(`${key} is not supported locally`);
      }
    }
    return Object.fromEntries(entries.map(([k, v]) => [k, resolve(v)]));
  };
  return resolve;
}

export type Resolve = ReturnType<typeof resolver>;
