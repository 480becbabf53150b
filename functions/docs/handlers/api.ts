import { httpHandler, json } from '../../shared/http';
import { openApiDocument } from '../openapi';
import { referencePage } from '../reference-page';

// Made once per sandbox from the contracts bundled with this function: what it serves is what the handlers validate.
const document = openApiDocument();
const page = referencePage(document);
/** The document changes only with a deployment. */
const CACHE = { 'cache-control': 'public, max-age=300' };

export const handler = httpHandler({
  'GET /openapi.json': async () => json(200, document, CACHE),
  'GET /docs': async () => ({
    statusCode: 200,
    headers: { 'content-type': 'text/html; charset=utf-8', ...CACHE },
    body: page,
  }),
});
