import {
  aws_apigatewayv2 as apigw,
  aws_apigateway as apigw1,
  aws_lambda as lambda,
  aws_logs as logs,
} from 'aws-cdk-lib';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Construct } from 'constructs';
import type { RouteScopes, Routes } from '../../functions/shared/seams';
import { acknowledgeCheckov, LOG_GROUP_KEY_REASON } from '../checkov';
import { acknowledgeNag } from '../nag';
import type { Watchlist } from '../observability/watchlist';
import type { StageConfig } from '../stage-config';

/** How the API's routes are authorized: the stage's JWT authorizer (see Identity). */
export interface RouteAuthorization {
  readonly authorizer: apigw.IHttpRouteAuthorizer;
}

/**
 * Routes `"METHOD /path"` keys of the HTTP API to one function (a service's
 * API handler), each behind the stage's JWT authorizer with the scopes its
 * seams declare (`AuthorizationScopes`: the token needs any one of them), or
 * with no authorizer where they say `public`; and registers them on the
 * watchlist (the dashboard's per-route graphs).
 */
export function addRoutes<R extends Routes>(
  api: apigw.HttpApi,
  fn: lambda.IFunction,
  routes: R,
  scopes: RouteScopes<R>,
  { authorizer }: RouteAuthorization,
  watchlist: Watchlist,
) {
  const integration = new HttpLambdaIntegration(`${fn.node.id}Integration`, fn, {
    payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
  });
  for (const [name, key] of Object.entries(routes) as [keyof R & string, string][]) {
    const [method, path] = key.split(' ') as [keyof typeof apigw.HttpMethod, string];
    const access = scopes[name];
    if (access !== 'public' && access.length === 0) throw new Error(`route ${key} names no scope`);
    const [route] = api.addRoutes({
      path,
      methods: [apigw.HttpMethod[method]],
      integration,
      ...(access === 'public'
        ? { authorizer: new apigw.HttpNoneAuthorizer() }
        : { authorizer, authorizationScopes: [...access] }),
    });
    if (access === 'public') {
      acknowledgeNag(
        route!,
        'APIG4',
        `${key} is public by the contract (api.md): how to call the API is no secret, and it serves only the document`,
      );
    }
  }
  watchlist.addRoutes(Object.values(routes));
}

/** The HTTP API's routes, once every service has added its own. */
export const routesOf = (api: apigw.HttpApi) =>
  api.node.children.filter((c): c is apigw.HttpRoute => c instanceof apigw.HttpRoute);

/**
 * The API's `$default` stage, made after every route: throttled as the stage
 * says (a default for every route and settings per route key, both in the
 * template's `AWS::ApiGatewayV2::Stage`, where a local runtime can read them
 * too), with per-route metrics and JSON access logs.
 */
export function addApiStage(scope: Construct, api: apigw.HttpApi, config: StageConfig): apigw.HttpStage {
  const routes = routesOf(api);
  const routeKeys = new Set(routes.map((r) => (r.node.defaultChild as apigw.CfnRoute).routeKey));
  const unknown = Object.keys(config.apiThrottle.routes).filter((key) => !routeKeys.has(key));
  if (unknown.length > 0)
    throw new Error(`stage ${config.stage} throttles unknown routes: ${unknown.join(', ')}`);

  const accessLogs = new logs.LogGroup(scope, 'ApiAccessLogs', {
    retention: config.logRetentionDays as logs.RetentionDays,
    removalPolicy: config.removalPolicy,
  });
  acknowledgeCheckov(accessLogs, 'CKV_AWS_158', LOG_GROUP_KEY_REASON);
  const stage = api.addStage('DefaultStage', {
    stageName: '$default',
    autoDeploy: true,
    throttle: config.apiThrottle.default,
    // Route-level metrics (requests, latency, errors per route) for the dashboard.
    detailedMetricsEnabled: true,
    accessLogSettings: {
      destination: new apigw.LogGroupLogDestination(accessLogs),
      // requestId is the correlation id a function logs when the client sent none.
      format: apigw1.AccessLogFormat.custom(
        JSON.stringify({
          requestId: '$context.requestId',
          ip: '$context.identity.sourceIp',
          requestTime: '$context.requestTime',
          routeKey: '$context.routeKey',
          status: '$context.status',
          responseLength: '$context.responseLength',
          responseLatency: '$context.responseLatency',
          integrationLatency: '$context.integrationLatency',
          integrationError: '$context.integrationErrorMessage',
          authorizerError: '$context.authorizer.error',
        }),
      ),
    },
  });
  const cfnStage = stage.node.defaultChild as apigw.CfnStage;
  cfnStage.routeSettings = Object.fromEntries(
    Object.entries(config.apiThrottle.routes).map(([key, throttle]) => [
      key,
      {
        ThrottlingRateLimit: throttle.rateLimit,
        ThrottlingBurstLimit: throttle.burstLimit,
        // A route's settings replace the stage's defaults for it, metrics included.
        DetailedMetricsEnabled: true,
      },
    ]),
  );
  // Route settings name routes by key: CloudFormation must have made them first.
  for (const route of routes) stage.node.addDependency(route);
  return stage;
}
