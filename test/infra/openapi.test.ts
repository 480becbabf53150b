import document from '../../openapi/openapi.json';
import { removeSynthesized, synthStage } from './synth';

/**
 * The OpenAPI document and the HTTP API the CDK synthesizes have the same
 * routes: a route added to the stack without its contract (or a contract
 * without its route) fails here. The document is the committed file, which a
 * unit test keeps equal to what the contracts generate.
 */
afterAll(removeSynthesized);

test('every route of the synthesized template is in the OpenAPI document, and every operation of it in the template', () => {
  const { template } = synthStage('dev');
  const templateRoutes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map((r) =>
    String(r.Properties.RouteKey),
  );
  const documentRoutes = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
  );
  expect(templateRoutes.length).toBeGreaterThan(0);
  expect(templateRoutes.filter((r) => !documentRoutes.includes(r))).toEqual([]);
  expect(documentRoutes.filter((r) => !templateRoutes.includes(r))).toEqual([]);
  expect(new Set(templateRoutes).size).toBe(templateRoutes.length);
});
