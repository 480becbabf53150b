/**
 * The AWS endpoint's gate on calls: IAM enforced locally (a function's call
 * is checked against its role before it runs), and faults injected into the
 * functions' DynamoDB calls (`POST /_local/faults/dynamodb`).
 */
import type { AwsEndpoint, CallAuthorizer } from './aws-endpoint';
import { AccessDeniedError, authorize } from './iam';
import { endpointAuthorizations } from './iam-actions';
import {
  awsRefusal,
  callKey,
  type DynamoFaultRule,
  type LostAnswers,
  lostAnswerFor,
  refusalFor,
} from './lambda/dynamo-faults';
import type { LambdaRuntime } from './lambda/runtime';
import type { LocalPrincipals } from './principals';

/**
 * Gates the functions' DynamoDB calls at `endpoint`; returns the check of a call's caller (for the
 * endpoint's other services), and the DynamoDB faults, to set and to read with what they did.
 */
export function gateFunctionCalls(
  endpoint: AwsEndpoint,
  runtime: LambdaRuntime,
  principals: LocalPrincipals,
) {
  // IAM enforced locally: a function's DynamoDB call is checked against its role before it runs, and
  // faults injected into the functions' calls (`POST /_local/faults/dynamodb`) refuse a share of them.
  let dynamoFaults: readonly DynamoFaultRule[] = [];
  // Answers lost per lost-answer rule (for its `count`), and what the faults did since they were last set.
  const lostAnswers: LostAnswers = { perRule: new Map(), calls: new Set() };
  const injected = { refused: 0, lostAnswers: 0 };
  // A call signed with a function's key is that function's; other callers (tests, the load tools, the CLI)
  // stand for the account's administrator and are not checked.
  const authorizeCaller: CallAuthorizer = (caller, prefix, operation, input) => {
    if (!caller || !runtime.specs.has(caller)) return;
    const principal = principals.function(caller);
    for (const { action, resource } of endpointAuthorizations(prefix, operation, input)) {
      authorize(principal, action, [resource]);
    }
  };
  endpoint.gateDynamo((caller, operation, input) => {
    try {
      authorizeCaller(caller, 'DynamoDB_20120810.', operation, input);
    } catch (error) {
      // Never let through unchecked: a request the check cannot read is refused, saying so.
      const message =
        error instanceof AccessDeniedError ? error.message : `local IAM check: ${(error as Error).message}`;
      return {
        status: 400,
        body: JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#AccessDeniedException', message }),
      };
    }
    if (!caller || !runtime.specs.has(caller)) return undefined;
    if (dynamoFaults.length === 0) return undefined;
    const refusal = refusalFor(dynamoFaults, operation);
    if (refusal) {
      injected.refused++;
      const { status, body } = awsRefusal(refusal.error, operation, input);
      return { status, body: JSON.stringify(body) };
    }
    const call = callKey(operation, input);
    const lose = lostAnswerFor(dynamoFaults, operation, lostAnswers, Math.random, call);
    if (!lose) return undefined;
    return {
      loseAnswer: lose.way,
      lost: () => {
        lostAnswers.perRule.set(lose.rule, (lostAnswers.perRule.get(lose.rule) ?? 0) + 1);
        if (lose.rule.once) lostAnswers.calls.add(call);
        injected.lostAnswers++;
      },
    };
  });
  return {
    authorizeCaller,
    /** What the DynamoDB faults have done since the cloud started: calls refused, answers lost after a write. */
    injected,
    get dynamoFaults() {
      return dynamoFaults;
    },
    /** Replaces the DynamoDB faults ([] turns them off); the lost answers' counts start again. */
    setDynamoFaults(rules: readonly DynamoFaultRule[]) {
      dynamoFaults = rules;
      lostAnswers.perRule.clear();
      lostAnswers.calls.clear();
    },
  };
}
