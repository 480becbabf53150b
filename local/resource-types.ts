import type { Assembly } from './assembly';

/** Resource types the local cloud knows it needs no local counterpart for (IAM, logs, API plumbing). */
export const NOT_RUN_LOCALLY = new Set([
  'AWS::IAM::Role',
  'AWS::IAM::Policy',
  'AWS::Lambda::Permission',
  'AWS::Logs::LogGroup',
  'AWS::SQS::QueuePolicy',
  'AWS::ApiGatewayV2::Api',
  'AWS::ApiGatewayV2::Integration',
  'AWS::CDK::Metadata',
  // Observability: dashboards, alarms and the alarm topic (and its key) watch AWS's metrics, which are not made locally.
  'AWS::CloudWatch::Alarm',
  'AWS::CloudWatch::Dashboard',
  'AWS::SNS::Topic',
  'AWS::SNS::TopicPolicy',
  'AWS::KMS::Key',
  // A scheduled function's on-failure destination: locally a rule target's own retries and dead-letter queue stand in.
  'AWS::Lambda::EventInvokeConfig',
  // A stage's own identity provider: the local cloud runs no Cognito, it is the issuer itself (local/auth:
  // it signs the access tokens the pool would, with the pool's issuer and the client's id as audience).
  'AWS::Cognito::UserPool',
  'AWS::Cognito::UserPoolClient',
  'AWS::Cognito::UserPoolResourceServer',
  'AWS::Cognito::UserPoolDomain',
]);

/** Resource types with a local counterpart. */
export const RUN_LOCALLY = new Set([
  'AWS::DynamoDB::Table',
  'AWS::Lambda::Function',
  'AWS::Lambda::EventSourceMapping',
  'AWS::ApiGatewayV2::Route',
  // Its route settings: the stage's throttle.
  'AWS::ApiGatewayV2::Stage',
  // The routes' JWT authorizer: the HTTP API enforces it (issuer, audience, signature, expiry, scopes)
  // before any function runs, with the local issuer's keys (local/auth).
  'AWS::ApiGatewayV2::Authorizer',
  'AWS::Events::EventBus',
  'AWS::Events::Rule',
  'AWS::SQS::Queue',
  'AWS::StepFunctions::StateMachine',
]);

/** Fails the start on a resource the local cloud neither runs nor knows it need not run. */
export function assertRunnable(assembly: Assembly) {
  const unknown = Object.entries(assembly.template.Resources).filter(
    ([, r]) => !NOT_RUN_LOCALLY.has(r.Type) && !RUN_LOCALLY.has(r.Type),
  );
  if (unknown.length > 0) {
    throw new Error(`the local cloud cannot run ${unknown.map(([id, r]) => `${id} (${r.Type})`).join(', ')}`);
  }
}
