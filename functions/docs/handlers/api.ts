import { httpHandler } from '../../shared/http';
import { openApiDocument } from '../openapi';
import { referencePage } from '../reference-page';
import { DOCS_ROUTES } from '../seams';

// Made once per sandbox from the contracts bundled with this function: what it serves is what the handlers validate.
const document = openApiDocument();
const documentJson = JSON.stringify(document);
const page = referencePage(document);
/** The document changes only with a deployment. */
const CACHE = { 'cache-control': 'public, max-age=300' };

export const handler = httpHandler(
  DOCS_ROUTES,
  {
    getOpenApiDocument: async () => ({
      statusCode: 200,
      headers: { 'content-type': 'application/json', ...CACHE },
      body: documentJson,
    }),
    getReferencePage: async () => ({
      statusCode: 200,
      headers: { 'content-type': 'text/html; charset=utf-8', ...CACHE },
      body: page,
    }),
    // The two routes without the JWT authorizer: anyone may read how to call the API.
  },
  { anonymous: true },
);
