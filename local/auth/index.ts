// The local cloud's identity: the issuer it stands in for and the JWT authorizer it enforces.
export {
  type Authorization,
  authorizeRequest,
  type GatewayRefusal,
  type JwtAuthorizerSpec,
  type JwtContext,
  jwtAuthorizers,
  type RouteAuthorization,
  routeAuthorization,
} from './authorizer';
export { LocalIssuer, type TokenAnswer, type TokenRequest } from './issuer';
export { keptSigningKey, newSigningKey, type SigningKey } from './keys';
export { type JwtExpectation, type JwtVerdict, verifyJwt } from './verify';
