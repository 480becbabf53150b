import { type Assembly, resourcesOfType } from './assembly';

/** A route's throttle: steady requests per second and the burst the bucket holds. */
export interface ThrottleLimit {
  readonly rate: number;
  readonly burst: number;
}

interface RouteSettings {
  ThrottlingRateLimit?: number;
  ThrottlingBurstLimit?: number;
}

const limitOf = (s: RouteSettings | undefined, fallback?: ThrottleLimit): ThrottleLimit | undefined => {
  const rate = s?.ThrottlingRateLimit ?? fallback?.rate;
  const burst = s?.ThrottlingBurstLimit ?? fallback?.burst;
  return rate === undefined && burst === undefined
    ? undefined
    : { rate: rate ?? Number.POSITIVE_INFINITY, burst: burst ?? Number.POSITIVE_INFINITY };
};

/**
 * The throttle of each route key from the HTTP API's stage: its default route
 * settings, overridden per route by `RouteSettings`. A route with neither is
 * not throttled (AWS then applies only the account's limits).
 */
export function stageThrottles(assembly: Assembly): (routeKey: string) => ThrottleLimit | undefined {
  const stages = resourcesOfType(assembly.template, 'AWS::ApiGatewayV2::Stage');
  const stage = stages[0]?.[1].Properties ?? {};
  const defaults = limitOf(stage.DefaultRouteSettings as RouteSettings | undefined);
  const perRoute = (stage.RouteSettings ?? {}) as Record<string, RouteSettings>;
  return (routeKey) => limitOf(perRoute[routeKey], defaults);
}

/**
 * A token bucket as API Gateway throttles with: it holds up to `burst`
 * requests and refills at `rate` per second; a request finding it empty is
 * refused.
 */
export class TokenBucket {
  private tokens: number;
  private updated: number;

  constructor(
    private readonly limit: ThrottleLimit,
    now = performance.now(),
  ) {
    this.tokens = limit.burst;
    this.updated = now;
  }

  take(now = performance.now()): boolean {
    const refill = ((now - this.updated) / 1000) * this.limit.rate;
    this.tokens = Math.min(this.limit.burst, this.tokens + refill);
    this.updated = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
