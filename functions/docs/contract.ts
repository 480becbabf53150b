/** The docs module's HTTP contract: the OpenAPI document itself and its reference page. */

import { commonResponses, type OperationSpec, operationOf } from '../shared/contract';
import { responseSchema } from '../shared/schemas';
import * as z from '../shared/zod';
import { DOCS_ROUTE_SCOPES, DOCS_ROUTES } from './seams';

export const OpenApiDocument = responseSchema(
  z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }),
  { id: 'OpenApiDocument', description: 'This document (OpenAPI 3.1).' },
);

export const docsOperations: readonly OperationSpec[] = [
  {
    ...operationOf(DOCS_ROUTES, 'getOpenApiDocument', DOCS_ROUTE_SCOPES),
    tag: 'Documentation',
    summary: 'This OpenAPI 3.1 document',
    responses: { 200: { description: 'The document.', schema: OpenApiDocument }, ...commonResponses },
  },
  {
    ...operationOf(DOCS_ROUTES, 'getReferencePage', DOCS_ROUTE_SCOPES),
    tag: 'Documentation',
    summary: 'The API reference as a web page',
    description: 'Rendered from this document; self-contained (no script or style from elsewhere).',
    responses: {
      200: { description: 'The reference page.', contentType: 'text/html; charset=utf-8' },
      ...commonResponses,
    },
  },
];
