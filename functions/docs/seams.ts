/** The docs module's seams with the CDK app (see functions/shared/seams.ts): the routes that describe the API. */

export const DOCS_ROUTES = {
  getOpenApiDocument: 'GET /openapi.json',
  getReferencePage: 'GET /docs',
} as const;
