import { aws_apigatewayv2 as apigw, aws_lambda as lambda } from 'aws-cdk-lib';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';

/** Routes `"METHOD /path"` keys of the HTTP API to one function (a service's API handler). */
export function addRoutes(api: apigw.HttpApi, fn: lambda.IFunction, routeKeys: readonly string[]) {
  const integration = new HttpLambdaIntegration(`${fn.node.id}Integration`, fn, {
    payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
  });
  for (const key of routeKeys) {
    const [method, path] = key.split(' ') as [keyof typeof apigw.HttpMethod, string];
    api.addRoutes({ path, methods: [apigw.HttpMethod[method]], integration });
  }
}
