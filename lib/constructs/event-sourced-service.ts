import type {
  aws_apigatewayv2 as apigw,
  Duration,
  aws_dynamodb as dynamodb,
  aws_lambda as lambda,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { RouteScopes, Routes } from '../../functions/shared/seams';
import type { Watchlist } from '../observability/watchlist';
import type { StageConfig } from '../stage-config';
import { EventStoreTable } from './event-store-table';
import { addRoutes, type RouteAuthorization } from './http-routes';
import { ServiceFunction } from './service-function';

/** What the stack gives every service. */
export interface ServiceProps {
  readonly config: StageConfig;
  readonly httpApi: apigw.HttpApi;
  /** The stage's JWT authorizer, for every route but the documentation. */
  readonly authorization: RouteAuthorization;
  readonly idempotencyTable: dynamodb.Table;
  readonly watchlist: Watchlist;
}

export interface ServiceApiProps<R extends Routes> {
  /** The module's routes (its seams.ts), all served by this one function. */
  readonly routes: R;
  /** Who may call each of them (its seams.ts, beside the routes). */
  readonly scopes: RouteScopes<R>;
  readonly description: string;
  /** Written by the seams of the modules the handler uses. */
  readonly environment: Record<string, string>;
  readonly timeout?: Duration;
}

/**
 * The shape every service of the platform repeats: an event store of its own
 * (`<Service>/Events`), and an HTTP API function (`<Service>/Api`, the
 * module's `handlers/api.ts`) serving the module's routes. A service adds its
 * read models, sweepers and grants.
 */
export abstract class EventSourcedService extends Construct {
  readonly events: dynamodb.Table;
  /** The module's folder under `functions/`, and its functions' Powertools service. */
  protected readonly module: string;
  protected readonly props: Omit<ServiceProps, 'idempotencyTable'>;

  constructor(scope: Construct, id: string, module: string, props: Omit<ServiceProps, 'idempotencyTable'>) {
    super(scope, id);
    this.module = module;
    this.props = props;
    this.events = new EventStoreTable(this, 'Events', props.config).table;
  }

  /** The service's API function, with the module's routes to it. */
  protected addApi<R extends Routes>({
    routes,
    scopes,
    description,
    environment,
    timeout,
  }: ServiceApiProps<R>): lambda.Function {
    const { config, httpApi, authorization, watchlist } = this.props;
    const api = new ServiceFunction(this, 'Api', {
      entry: `${this.module}/handlers/api.ts`,
      service: this.module,
      kind: 'api',
      config,
      watchlist,
      description,
      environment,
      timeout,
    }).fn;
    addRoutes(httpApi, api, routes, scopes, authorization, watchlist);
    return api;
  }
}
