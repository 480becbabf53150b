import { type aws_apigatewayv2 as apigw, Duration } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { addRoutes } from '../constructs/http-routes';
import { ServiceFunction } from '../constructs/service-function';
import type { StageConfig } from '../stage-config';

/** The routes that serve the API's own description; functions/docs/contract.ts describes them. */
export const DOCS_ROUTES = ['GET /openapi.json', 'GET /docs'] as const;

/**
 * The API's OpenAPI document and its reference page, served by a small
 * function that carries both (built from the same contracts as the other
 * functions' validation): the stage serves what it runs, and the local cloud
 * serves them as any other route. Behind the stage's authorizer like every route.
 */
export class ApiDocs extends Construct {
  constructor(
    scope: Construct,
    id: string,
    { config, httpApi }: { config: StageConfig; httpApi: apigw.HttpApi },
  ) {
    super(scope, id);
    const api = new ServiceFunction(this, 'Api', {
      entry: 'docs/handlers/api.ts',
      service: 'docs',
      kind: 'docs',
      config,
      // It serves two strings it makes at its start; no table, no AWS call.
      memorySize: 256,
      timeout: Duration.seconds(5),
      description: 'API documentation: the OpenAPI document and its reference page',
    }).fn;
    addRoutes(httpApi, api, DOCS_ROUTES);
  }
}
