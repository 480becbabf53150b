/** The payments module's seams with the CDK app (see functions/shared/seams.ts). */
import { environment, type RouteScopes, SHOP_OR_ADMIN, text } from '../shared/seams';

export const PAYMENTS_ROUTES = {
  getPayment: 'GET /payments/{paymentId}',
} as const;

/** Who may call each route (the JWT authorizer's scopes); a shop caller reaches only its own payments. */
export const PAYMENTS_ROUTE_SCOPES: RouteScopes<typeof PAYMENTS_ROUTES> = {
  getPayment: SHOP_OR_ADMIN,
};

/** What a function that reads or writes payments needs: their event table. */
export const paymentsEnvironment = environment({ paymentsTable: text('PAYMENTS_TABLE') });
