import { type aws_apigatewayv2 as apigw, Duration } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { DOCS_ROUTE_SCOPES, DOCS_ROUTES } from '../../functions/docs/seams';
import { addRoutes, type RouteAuthorization } from '../constructs/http-routes';
import { ServiceFunction } from '../constructs/service-function';
import type { Watchlist } from '../observability/watchlist';
import type { StageConfig } from '../stage-config';

/**
 * The API's OpenAPI document and its reference page, served by a small
 * function that carries both: the document `npm run openapi` generates from
 * the contracts the other functions validate with (`npm test` and the deploy
 * pipeline fail while the committed one differs), so the stage serves what
 * it runs. The two routes with no authorizer: anyone may read how to call
 * the API.
 */
export class ApiDocs extends Construct {
  constructor(
    scope: Construct,
    id: string,
    {
      config,
      httpApi,
      authorization,
      watchlist,
    }: {
      config: StageConfig;
      httpApi: apigw.HttpApi;
      authorization: RouteAuthorization;
      watchlist: Watchlist;
    },
  ) {
    super(scope, id);
    const api = new ServiceFunction(this, 'Api', {
      entry: 'docs/handlers/api.ts',
      service: 'docs',
      kind: 'docs',
      config,
      watchlist,
      // It serves two strings it makes at its start; no table, no AWS call, no AWS client bundled.
      memorySize: 256,
      timeout: Duration.seconds(5),
      description: 'API documentation: the OpenAPI document and its reference page',
    }).fn;
    addRoutes(httpApi, api, DOCS_ROUTES, DOCS_ROUTE_SCOPES, authorization, watchlist);
  }
}
