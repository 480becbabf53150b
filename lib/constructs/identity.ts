import { Aws, CfnOutput, aws_cognito as cognito, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { Construct } from 'constructs';
import { RESOURCE_SERVER, SCOPES } from '../../functions/shared/seams';
import { acknowledgeNag } from '../nag';
import type { StageConfig } from '../stage-config';
import { isPlaceholder, STAGE_SETTINGS_FILE } from '../stage-settings';

/**
 * Who the API trusts: one JWT authorizer (API Gateway's, reading
 * `Authorization: Bearer <JWT>`) for every route but the documentation.
 *
 * A stage with an external issuer trusts it (prod names one in
 * config/stages.ts, and refuses to synthesize with a placeholder). A stage without one gets its own
 * Cognito user pool: the resource server `commerce` with the scopes `shop` and
 * `admin`, an app client for shoppers (authorization code with PKCE, no
 * secret: a browser or a phone cannot keep one) and one for operators (client
 * credentials, with a secret). The authorizer's issuer is the pool's, its
 * audience both clients: Cognito's access tokens carry `client_id` rather
 * than `aud`, and API Gateway's JWT authorizer checks either against it.
 */
export class Identity extends Construct {
  readonly authorizer: HttpJwtAuthorizer;
  readonly issuer: string;
  readonly audience: readonly string[];
  readonly userPool?: cognito.UserPool;

  constructor(scope: Construct, id: string, config: StageConfig) {
    super(scope, id);
    const external = config.externalIssuer;
    if (external) {
      // stageConfig refuses it first; a config made by hand must not slip one through either.
      if (isPlaceholder(external.issuer)) {
        throw new Error(
          `stage ${config.stage} names the placeholder JWT issuer ${external.issuer}: set ${config.stage}.identity.issuer in ${STAGE_SETTINGS_FILE}`,
        );
      }
      this.issuer = external.issuer;
      this.audience = external.audience;
    } else {
      const pool = this.makeUserPool(config);
      this.userPool = pool.userPool;
      this.issuer = `https://cognito-idp.${Stack.of(this).region}.amazonaws.com/${pool.userPool.userPoolId}`;
      this.audience = [pool.shopClient.userPoolClientId, pool.operatorClient.userPoolClientId];
    }
    this.authorizer = new HttpJwtAuthorizer('Jwt', this.issuer, { jwtAudience: [...this.audience] });
    new CfnOutput(Stack.of(this), 'JwtIssuer', {
      value: this.issuer,
      description: 'The issuer of the tokens the API accepts',
    });
  }

  private makeUserPool(config: StageConfig) {
    const { removalPolicy, callbackUrls, logoutUrls } = config.userPool;
    const userPool = new cognito.UserPool(this, 'UserPool', {
      // Shoppers sign themselves up with their email; operators are app clients, not users.
      selfSignUpEnabled: true,
      signInAliases: { email: true },
      autoVerify: { email: true },
      standardAttributes: { email: { required: true, mutable: true } },
      passwordPolicy: {
        minLength: 12,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
      },
      mfa: cognito.Mfa.OPTIONAL,
      mfaSecondFactor: { sms: false, otp: true },
      accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
      deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
      removalPolicy,
    });
    acknowledgeNag(
      userPool,
      'COG2',
      'MFA is offered (TOTP) but not required of shoppers: a shop token reaches only its own records, and requiring a second factor at sign-up is a product decision; operators are app clients (client credentials), not users',
    );
    const plus =
      "Cognito's threat protection (advanced security) needs the Plus feature plan, a cost per monthly active user; the API's throttling and per-caller hold limit bound what one account can do";
    acknowledgeNag(userPool, 'COG3', plus);
    acknowledgeNag(userPool, 'COG8', plus);

    // `commerce/shop` and `commerce/admin`: the scopes the routes require (functions/shared/seams.ts SCOPES).
    const shop = new cognito.ResourceServerScope({
      scopeName: SCOPES.shop.slice(RESOURCE_SERVER.length + 1),
      scopeDescription: 'A customer acting for itself',
    });
    const admin = new cognito.ResourceServerScope({
      scopeName: SCOPES.admin.slice(RESOURCE_SERVER.length + 1),
      scopeDescription: 'An operator: everything, for anyone',
    });
    const resourceServer = userPool.addResourceServer('ResourceServer', {
      identifier: RESOURCE_SERVER,
      userPoolResourceServerName: 'Commerce API',
      scopes: [shop, admin],
    });
    const shopScope = cognito.OAuthScope.resourceServer(resourceServer, shop);
    const adminScope = cognito.OAuthScope.resourceServer(resourceServer, admin);

    const tokenValidity = {
      accessTokenValidity: Duration.hours(1),
      idTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(30),
    };
    const shopClient = userPool.addClient('ShopClient', {
      userPoolClientName: 'shop',
      generateSecret: false,
      // Cognito requires PKCE of a public client's authorization code flow when the request carries a challenge.
      authFlows: { userSrp: true },
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: [shopScope, cognito.OAuthScope.OPENID, cognito.OAuthScope.EMAIL],
        callbackUrls: [...callbackUrls],
        logoutUrls: [...logoutUrls],
      },
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      ...tokenValidity,
    });
    const operatorClient = userPool.addClient('OperatorClient', {
      userPoolClientName: 'operator',
      generateSecret: true,
      oAuth: { flows: { clientCredentials: true }, scopes: [adminScope] },
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      ...tokenValidity,
    });
    // The OAuth endpoints (/oauth2/authorize, /oauth2/token): a Cognito domain, its prefix unique per account.
    const domain = userPool.addDomain('Domain', {
      cognitoDomain: { domainPrefix: `commerce-${config.stage}-${Aws.ACCOUNT_ID}` },
    });
    for (const resource of [shopClient, operatorClient, domain, resourceServer]) {
      resource.applyRemovalPolicy(removalPolicy);
    }

    const stack = Stack.of(this);
    new CfnOutput(stack, 'UserPoolId', { value: userPool.userPoolId, description: 'The stage’s user pool' });
    new CfnOutput(stack, 'ShopClientId', {
      value: shopClient.userPoolClientId,
      description: 'Shoppers’ app client: authorization code with PKCE, scope commerce/shop openid',
    });
    new CfnOutput(stack, 'OperatorClientId', {
      value: operatorClient.userPoolClientId,
      description:
        'Operators’ app client: client credentials, scope commerce/admin (its secret is in the Cognito console)',
    });
    new CfnOutput(stack, 'TokenUrl', {
      value: `${domain.baseUrl()}/oauth2/token`,
      description: 'Where both clients get their tokens',
    });
    return { userPool, shopClient, operatorClient };
  }
}
