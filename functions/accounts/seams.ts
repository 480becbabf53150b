/** The accounts module's seams with the CDK app (see functions/shared/seams.ts). */
import { environment, type RouteScopes, SHOP_OR_ADMIN, text } from '../shared/seams';

export const ACCOUNTS_ROUTES = {
  registerCustomer: 'POST /customers',
  getCustomer: 'GET /customers/{customerId}',
  getOwnCustomer: 'GET /customers/me',
} as const;

/** Who may call each route (the JWT authorizer's scopes); what a shop caller may do there is the handler's to check. */
export const ACCOUNTS_ROUTE_SCOPES: RouteScopes<typeof ACCOUNTS_ROUTES> = {
  registerCustomer: SHOP_OR_ADMIN,
  getCustomer: SHOP_OR_ADMIN,
  getOwnCustomer: SHOP_OR_ADMIN,
};

/** What a function that reads or writes customers needs: their event table. */
export const accountsEnvironment = environment({ accountsTable: text('ACCOUNTS_TABLE') });
