import document from '../../../openapi/openapi.json';
import { httpHandler } from '../../shared/http';
import { referencePage } from '../reference-page';
import { DOCS_ROUTES } from '../seams';

// The document `npm run openapi` generates from the contracts (../openapi.ts), as committed: `npm test`
// and the deploy pipeline fail while it differs from them. Generating it here instead would bundle every
// module's contract, zod and, through their facades, the AWS clients (340 KB against 120).
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
