import type { KeyNames } from './collection';
import type { Input } from './engine';
import { validation } from './errors';
import { type CompiledRequest, compileRequest } from './expressions';
import type { AttributeValue } from './values';

export type Compiled = CompiledRequest;

/** The expressions an operation takes; a key condition names the key schema it is checked against. */
export interface ExpressionKinds {
  readonly condition?: boolean;
  readonly update?: boolean;
  readonly projection?: boolean;
  readonly filter?: boolean;
  readonly keyCondition?: KeyNames & { readonly types?: Readonly<Record<string, string>> };
}

/**
 * The legacy parameters that expressions replaced ("Legacy conditional
 * parameters", Developer Guide). Nothing this project runs sends them; this
 * engine refuses them by name rather than ignore what they ask.
 */
const LEGACY = [
  'Expected',
  'AttributeUpdates',
  'KeyConditions',
  'QueryFilter',
  'ScanFilter',
  'AttributesToGet',
  'ConditionalOperator',
];

/** Compiles the expressions of one request (or of one action of a transaction). */
export function compileExpressions(input: Input, kinds: ExpressionKinds): Compiled {
  for (const name of LEGACY) {
    if (input[name] !== undefined) {
      throw validation(`${name} is a legacy parameter this engine does not support: use expressions instead`);
    }
  }
  const text = (name: string, wanted: unknown): string | undefined => {
    const value = input[name];
    if (!wanted || value === undefined) return undefined;
    if (typeof value !== 'string') throw validation(`${name} must be a string`);
    return value;
  };
  return compileRequest(
    {
      condition: text('ConditionExpression', kinds.condition),
      update: text('UpdateExpression', kinds.update),
      projection: text('ProjectionExpression', kinds.projection),
      filter: text('FilterExpression', kinds.filter),
      keyCondition: text('KeyConditionExpression', kinds.keyCondition),
    },
    input.ExpressionAttributeNames as Record<string, string> | undefined,
    input.ExpressionAttributeValues as Record<string, AttributeValue> | undefined,
    kinds.keyCondition,
  );
}
