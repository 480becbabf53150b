import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Assembly, arnOf, type Resolve, resourcesOfType } from '../assembly';

/**
 * Reads the state machines of the cloud assembly: their ASL (inline, or the
 * file asset that `DefinitionBody.fromFile` uploads, with its
 * `DefinitionSubstitutions` applied as CloudFormation does), type and role,
 * and every Task state they contain.
 */
export interface StateMachineSpec {
  readonly logicalId: string;
  readonly arn: string;
  readonly name: string;
  readonly type: 'STANDARD' | 'EXPRESS';
  readonly roleArn?: string;
  /** The definition as deployed (after substitutions), as AWS's DescribeStateMachine returns it. */
  readonly definitionText: string;
  readonly definition: AslDefinition;
}

export interface AslDefinition {
  StartAt: string;
  States: Record<string, AslState>;
  TimeoutSeconds?: number;
  [field: string]: unknown;
}

export interface AslState {
  Type: string;
  [field: string]: unknown;
}

export const LAMBDA_INVOKE = 'arn:aws:states:::lambda:invoke';
/** The optimized DynamoDB integration's GetItem: the Task reads an item itself, no function in between. */
export const DYNAMODB_GET_ITEM = 'arn:aws:states:::dynamodb:getItem';
const LAMBDA_ARN = /^arn:aws[a-z-]*:lambda:[^:]+:[^:]+:function:[^:]+(:[^:]+)?$/;

/** The longest timer Node can set (2^31 - 1 ms); longer ones fire at once. */
export const MAX_TIMEOUT_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

interface AssetManifest {
  files?: Record<
    string,
    { source?: { path?: string }; destinations?: Record<string, { objectKey?: string }> }
  >;
}

function assetManifests(dir: string): AssetManifest[] {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
    artifacts?: Record<string, { type: string; properties?: { file?: string } }>;
  };
  const files = Object.values(manifest.artifacts ?? {})
    .filter((a) => a.type === 'cdk:asset-manifest' && a.properties?.file)
    .map((a) => a.properties!.file!);
  const names = files.length > 0 ? files : readdirSync(dir).filter((f) => f.endsWith('.assets.json'));
  return names.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as AssetManifest);
}

/** The file in the assembly that was published to S3 under `key`. */
function assetFileFor(assembly: Assembly, key: string): string {
  const hash = key.replace(/\.[^.]*$/, '');
  for (const manifest of assetManifests(assembly.dir)) {
    for (const [id, entry] of Object.entries(manifest.files ?? {})) {
      const published = Object.values(entry.destinations ?? {}).some((d) => d.objectKey === key);
      if ((published || id === hash) && entry.source?.path) return join(assembly.dir, entry.source.path);
    }
  }
  throw new Error(`no asset in ${assembly.dir} is published as ${key}`);
}

function definitionText(assembly: Assembly, resolve: Resolve, logicalId: string, p: Record<string, unknown>) {
  let text: string;
  if (p.DefinitionString !== undefined) text = String(resolve(p.DefinitionString));
  else if (p.Definition !== undefined) text = JSON.stringify(resolve(p.Definition));
  else if (p.DefinitionS3Location !== undefined) {
    const location = resolve(p.DefinitionS3Location) as { Key?: unknown };
    if (typeof location.Key !== 'string')
      throw new Error(`state machine ${logicalId}: DefinitionS3Location has no Key`);
    text = readFileSync(assetFileFor(assembly, location.Key), 'utf8');
  } else throw new Error(`state machine ${logicalId} has no definition`);
  const substitutions = resolve(p.DefinitionSubstitutions ?? {}) as Record<string, unknown>;
  return text.replace(/\$\{([^}]+)\}/g, (placeholder, name: string) =>
    name in substitutions ? String(substitutions[name]) : placeholder,
  );
}

export function stateMachineSpecs(assembly: Assembly, resolve: Resolve): StateMachineSpec[] {
  return resourcesOfType(assembly.template, 'AWS::StepFunctions::StateMachine').map(([logicalId, r]) => {
    const p = r.Properties ?? {};
    const text = definitionText(assembly, resolve, logicalId, p);
    let definition: AslDefinition;
    try {
      definition = JSON.parse(text) as AslDefinition;
    } catch (error) {
      throw new Error(`state machine ${logicalId}: the definition is not JSON (${(error as Error).message})`);
    }
    const type = String(p.StateMachineType ?? 'STANDARD');
    if (type !== 'STANDARD' && type !== 'EXPRESS') {
      throw new Error(`state machine ${logicalId}: unknown type ${type}`);
    }
    let roleArn: string | undefined;
    try {
      roleArn = p.RoleArn === undefined ? undefined : String(resolve(p.RoleArn));
    } catch {
      roleArn = undefined;
    }
    return {
      logicalId,
      arn: arnOf(logicalId, r),
      name: logicalId,
      type,
      ...(roleArn ? { roleArn } : {}),
      definitionText: text,
      definition,
    };
  });
}

/** A Task state, and the local function it runs. */
export interface TaskSpec {
  readonly state: string;
  readonly resource: string;
  /**
   * `lambda:invoke` returns the invoke result shape; a plain function ARN returns the result itself;
   * `dynamodb` is DynamoDB's GetItem, answering its response (`Item`, when there is one).
   */
  readonly kind: 'invoke' | 'function' | 'dynamodb';
  /** The function's logical id; absent when `FunctionName.$` picks it at run time. */
  readonly functionId?: string;
  readonly timeoutSeconds?: number;
}

type Visit = (name: string, state: AslState) => void;

function visitStates(definition: { States?: Record<string, AslState> }, visit: Visit) {
  for (const [name, state] of Object.entries(definition.States ?? {})) {
    visit(name, state);
    for (const branch of (state.Branches as { States?: Record<string, AslState> }[] | undefined) ?? []) {
      visitStates(branch, visit);
    }
    const processor = (state.ItemProcessor ?? state.Iterator) as
      | { States?: Record<string, AslState> }
      | undefined;
    if (processor) visitStates(processor, visit);
  }
}

/**
 * Checks that the definition runs locally and wires every Task state to a
 * function of `functionIdOf`; anything else (another service, an unknown
 * function, JSONata, variables) is an error here, at startup.
 */
export function taskSpecs(spec: StateMachineSpec, functionIdOf: (nameOrArn: string) => string) {
  const where = (state: string) => `state machine ${spec.logicalId}, state ${state}`;
  const tasks = new Map<string, TaskSpec>();
  if (spec.definition.QueryLanguage === 'JSONata') {
    throw new Error(
      `state machine ${spec.logicalId}: JSONata is not supported locally; write the ASL in JSONPath`,
    );
  }
  visitStates(spec.definition, (name, state) => {
    if (state.QueryLanguage === 'JSONata')
      throw new Error(`${where(name)}: JSONata is not supported locally`);
    if ('Assign' in state) throw new Error(`${where(name)}: variables (Assign) are not supported locally`);
    if (state.Type === 'Map' && ('ItemReader' in state || 'ResultWriter' in state)) {
      throw new Error(`${where(name)}: distributed Map is not supported locally`);
    }
    if (state.Type !== 'Task') return;
    if ('TimeoutSecondsPath' in state)
      throw new Error(`${where(name)}: TimeoutSecondsPath is not supported locally`);
    const resource = String(state.Resource);
    const known = (functionName: string) => {
      try {
        return functionIdOf(functionName);
      } catch {
        throw new Error(`${where(name)}: function ${functionName} is not a function of this app`);
      }
    };
    const timeoutSeconds = typeof state.TimeoutSeconds === 'number' ? state.TimeoutSeconds : undefined;
    let task: TaskSpec;
    if (resource === LAMBDA_INVOKE) {
      const parameters = (state.Parameters ?? {}) as Record<string, unknown>;
      if (typeof parameters.FunctionName === 'string') {
        task = {
          state: name,
          resource,
          kind: 'invoke',
          functionId: known(parameters.FunctionName),
          timeoutSeconds,
        };
      } else if (typeof parameters['FunctionName.$'] === 'string') {
        task = { state: name, resource, kind: 'invoke', timeoutSeconds };
      } else throw new Error(`${where(name)}: lambda:invoke without Parameters.FunctionName`);
    } else if (resource === DYNAMODB_GET_ITEM) {
      task = { state: name, resource, kind: 'dynamodb', timeoutSeconds };
    } else if (LAMBDA_ARN.test(resource)) {
      task = { state: name, resource, kind: 'function', functionId: known(resource), timeoutSeconds };
    } else {
      throw new Error(
        `${where(name)}: Task resource ${resource} is not wired locally (only Lambda functions and DynamoDB's GetItem are)`,
      );
    }
    const previous = tasks.get(name);
    if (previous && JSON.stringify(previous) !== JSON.stringify(task)) {
      throw new Error(`${where(name)}: two Task states of this name run different functions`);
    }
    tasks.set(name, task);
  });
  return tasks;
}

/**
 * The definition handed to the interpreter: a copy whose timers cannot
 * overflow, and whose Tasks without `TimeoutSeconds` have no 60-second
 * limit (the interpreter's default; AWS has none).
 */
export function runnableDefinition(definition: AslDefinition): AslDefinition {
  // JSON, not structuredClone: under Jest the latter makes objects of another realm, which the
  // interpreter's plain-object test rejects (nested Parameters would not be processed).
  const copy = JSON.parse(JSON.stringify(definition)) as AslDefinition;
  if (typeof copy.TimeoutSeconds === 'number') {
    copy.TimeoutSeconds = Math.min(copy.TimeoutSeconds, MAX_TIMEOUT_SECONDS);
  }
  visitStates(copy, (_, state) => {
    if (state.Type !== 'Task') return;
    state.TimeoutSeconds = Math.min(
      typeof state.TimeoutSeconds === 'number' ? state.TimeoutSeconds : MAX_TIMEOUT_SECONDS,
      MAX_TIMEOUT_SECONDS,
    );
  });
  return copy;
}
