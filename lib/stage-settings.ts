/**
 * Where and for whom a stage is deployed: the settings a deployer keeps in
 * `config/stages.ts` (the account and region, who signs the tokens, who is
 * paged, whose bill it is), their types, and the check that refuses to
 * synthesize staging or prod with a placeholder or a missing value. How the
 * platform is shaped on each stage (throttles, concurrency, retention, the
 * saga's workflow type) is engineering, reviewed in `lib/stage-config.ts`.
 *
 * No secret is ever a value here: a secret is named (a Secrets Manager
 * secret's name) and read where it is used, by whoever has the right to.
 */

/** The file a deployer edits; every refusal names it. */
export const STAGE_SETTINGS_FILE = 'config/stages.ts';

/** A secret, by name only: the Secrets Manager secret that holds it (its value never enters the repository). */
export interface SecretReference {
  readonly secretsManagerName: string;
}

/**
 * The stage's own Cognito user pool (made by the stack): where the shoppers'
 * app client may send the authorization code. The operators' client secret is
 * Cognito's, read from the pool (the stack's outputs name the pool and client).
 */
export interface UserPoolIdentity {
  readonly kind: 'userPool';
  readonly callbackUrls: readonly string[];
  readonly logoutUrls: readonly string[];
}

/** An identity provider outside the stack: tokens from `issuer` whose `aud` (or `client_id`) is one of `audience`. */
export interface ExternalIdentity {
  readonly kind: 'external';
  readonly issuer: string;
  readonly audience: readonly string[];
  /**
   * An operators' client of that provider (client credentials, scope
   * `commerce/admin`) for the pipeline's smoke and load runs on this stage,
   * its secret by name. Optional: prod is never load-tested.
   */
  readonly loadClient?: {
    readonly tokenUrl: string;
    readonly clientId: string;
    readonly clientSecret: SecretReference;
  };
}

/** What a deployer sets for one stage. `undefined` is "not set": refused on staging and prod. */
export interface StageSettings {
  /** The AWS account the stage deploys to (12 digits). Unset on dev: the account of your credentials. */
  readonly account: string | undefined;
  /** Its region (e.g. eu-west-1). Unset on dev: the region of your credentials' profile. */
  readonly region: string | undefined;
  readonly identity: UserPoolIdentity | ExternalIdentity;
  /** Subscribed to the stage's alarm topic (the address confirms by mail once). */
  readonly alarmEmail: string | undefined;
  /** Tagged on every resource with `project` and `stage` (cost allocation, ownership). */
  readonly tags: { readonly owner: string | undefined; readonly costCentre: string | undefined };
}

/** The settings of every stage, as `config/stages.ts` exports them. */
export type StageSettingsFile = Readonly<Record<'dev' | 'staging' | 'prod', StageSettings>>;

/** Stages that must name every setting, with no placeholder left: a mistake there reaches customers or their data. */
export const STRICT_STAGES: ReadonlySet<string> = new Set(['staging', 'prod']);

/**
 * Whether `value` is a documentation placeholder rather than a real setting:
 * `<...>` (the file's fill-in marks), or a URL or email address under
 * example.com/.org/.net (RFC 2606, reserved for documentation).
 */
export function isPlaceholder(value: string): boolean {
  return (
    /^<.*>$/s.test(value.trim()) ||
    /^https?:\/\/([^/]*\.)?example\.(com|org|net)(\/|:|$)/i.test(value) ||
    /@([^@\s]*\.)?example\.(com|org|net)$/i.test(value)
  );
}

const ACCOUNT = /^\d{12}$/;
const REGION = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const HTTPS = /^https:\/\/[^\s/]+\S*$/;
/** https anywhere, http only on localhost (a developer's shop on their machine). */
const CALLBACK = /^(https:\/\/\S+|http:\/\/localhost(:\d+)?(\/\S*)?)$/;
/** Secrets Manager's own rule for a secret's name. */
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;

/**
 * Checks one stage's settings; returns every problem, each naming the
 * setting as `<stage>.<path>` and saying what to put there. Empty: ready.
 */
export function settingsProblems(stage: string, settings: StageSettings | undefined): string[] {
  if (!settings) return [`${stage}: no settings for this stage`];
  const strict = STRICT_STAGES.has(stage);
  const problems: string[] = [];
  /** A required (on staging and prod) string setting: unset, a placeholder, or malformed. */
  const check = (path: string, value: string | undefined, valid: RegExp, what: string, required = strict) => {
    const name = `${stage}.${path}`;
    if (value === undefined || value.trim() === '') {
      if (required) problems.push(`${name} is not set: give ${what}`);
    } else if (isPlaceholder(value)) {
      problems.push(`${name} is the placeholder ${JSON.stringify(value)}: give ${what}`);
    } else if (!valid.test(value)) {
      problems.push(`${name} is ${JSON.stringify(value)}, not ${what}`);
    }
  };
  check('account', settings.account, ACCOUNT, 'the 12-digit AWS account id the stage deploys to');
  check('region', settings.region, REGION, 'the AWS region the stage deploys to (e.g. eu-west-1)');
  if ((settings.account === undefined) !== (settings.region === undefined))
    problems.push(`${stage}.account and ${stage}.region go together: give both, or neither (dev only)`);
  check('alarmEmail', settings.alarmEmail, EMAIL, 'the address the stage’s alarms are mailed to');
  check('tags.owner', settings.tags.owner, /\S/, 'the team that owns the stage (a tag on every resource)');
  check(
    'tags.costCentre',
    settings.tags.costCentre,
    /\S/,
    'the cost centre its bill goes to (a tag on every resource)',
  );

  const identity = settings.identity;
  if (identity.kind === 'external') {
    // Required on every stage that names an external provider: a wrong issuer answers 401 to every request.
    const required = (path: string, value: string | undefined, valid: RegExp, what: string) =>
      check(path, value, valid, what, true);
    required(
      'identity.issuer',
      identity.issuer,
      HTTPS,
      'your identity provider’s issuer, an https:// URL (the `iss` of its tokens)',
    );
    const audience = identity.audience.map((a) => a.trim()).filter(Boolean);
    if (audience.length === 0)
      problems.push(
        `${stage}.identity.audience is empty: give the audience (or client ids) its tokens carry`,
      );
    for (const a of audience) if (isPlaceholder(a)) problems.push(`${stage}.identity.audience has ${a}`);
    if (identity.loadClient) {
      const { tokenUrl, clientId, clientSecret } = identity.loadClient;
      required('identity.loadClient.tokenUrl', tokenUrl, HTTPS, 'the provider’s token endpoint (https)');
      required('identity.loadClient.clientId', clientId, /\S/, 'the operators’ client id');
      required(
        'identity.loadClient.clientSecret.secretsManagerName',
        clientSecret.secretsManagerName,
        SECRET_NAME,
        'the name (never the value) of the Secrets Manager secret holding the client’s secret',
      );
    }
  } else {
    const urls = (path: 'callbackUrls' | 'logoutUrls') => {
      const list = identity[path];
      if (list.length === 0) problems.push(`${stage}.identity.${path} is empty: give at least one URL`);
      for (const url of list) {
        if (isPlaceholder(url)) problems.push(`${stage}.identity.${path} has the placeholder ${url}`);
        else if (!CALLBACK.test(url))
          problems.push(`${stage}.identity.${path} has ${url}: https URLs only (http only on localhost)`);
      }
    };
    urls('callbackUrls');
    urls('logoutUrls');
  }
  return problems;
}

/** Throws, naming every setting to fix and the file to fix it in, unless the stage's settings are ready. */
export function checkedSettings(stage: string, file: StageSettingsFile): StageSettings {
  const settings = (file as Readonly<Record<string, StageSettings>>)[stage];
  const problems = settingsProblems(stage, settings);
  if (problems.length > 0) {
    throw new Error(
      `stage ${stage} cannot be synthesized: edit ${STAGE_SETTINGS_FILE} (the stage's settings, see docs/deploy.md):\n` +
        problems.map((p) => `  - ${p}`).join('\n'),
    );
  }
  return settings!;
}
