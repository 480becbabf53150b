/**
 * What the bundles get for `@aws-sdk/credential-provider-node` (the
 * construct's esbuild alias, lib/constructs/service-function.ts): every SDK
 * client's runtime config imports that package's `defaultProvider`, the whole
 * Node.js chain (environment, SSO, ini files, processes, web identity,
 * container and instance metadata, and the STS, SSO and sign-in clients they
 * call: about 100 KB of every minified bundle), whether or not a client is
 * given `credentials`. No bundler can drop it: the import is static.
 *
 * A function only ever runs where its credentials are in the environment:
 * Lambda sets `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and
 * `AWS_SESSION_TOKEN` for the execution role, and the chain's first link,
 * environment variables, is the one that answers there (Lambda sets no
 * `AWS_PROFILE`, the one thing that would skip it). So the bundles keep that
 * link alone; where the environment has no credentials the client fails as
 * the chain's first link does, with `CredentialsProviderError`.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

type FromEnvInit = Parameters<typeof fromEnv>[0];

/** `@aws-sdk/credential-provider-node`'s export, as the clients call it. */
export const defaultProvider = (init?: FromEnvInit) => fromEnv(init);
