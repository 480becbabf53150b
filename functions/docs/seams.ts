/** The docs module's seams with the CDK app (see functions/shared/seams.ts): the routes that describe the API. */
import { PUBLIC, type RouteScopes } from '../shared/seams';

export const DOCS_ROUTES = {
  getOpenApiDocument: 'GET /openapi.json',
  getReferencePage: 'GET /docs',
} as const;

/** The only routes with no authorizer: anyone may read how to call the API. */
export const DOCS_ROUTE_SCOPES: RouteScopes<typeof DOCS_ROUTES> = {
  getOpenApiDocument: PUBLIC,
  getReferencePage: PUBLIC,
};
