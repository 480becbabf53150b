/**
 * What the bundles get for `@aws-sdk/middleware-endpoint-discovery` (the
 * construct's esbuild alias, lib/constructs/service-function.ts). The
 * DynamoDB client's constructor resolves an endpoint discovery config, which
 * builds an LRU endpoint cache (mnemonist: about 8.5 KB of every minified
 * bundle), but none of its commands adds the discovery middleware that would
 * read it: the SDK version pinned here never discovers an endpoint (and
 * DynamoDB does not need it). So the config keeps its shape and discovery
 * stays off, as it is by default; bundles.test.ts fails if a command starts
 * to use it.
 */

/** The environment and config-file settings (`AWS_ENABLE_ENDPOINT_DISCOVERY`), never consulted. */
export const NODE_ENDPOINT_DISCOVERY_CONFIG_OPTIONS = {
  environmentVariableSelector: (): boolean | undefined => undefined,
  configFileSelector: (): boolean | undefined => undefined,
  default: undefined,
};

export const resolveEndpointDiscoveryConfig = <Input extends object>(
  input: Input,
  { endpointDiscoveryCommandCtor }: { endpointDiscoveryCommandCtor: unknown },
) =>
  Object.assign(input, {
    endpointDiscoveryCommandCtor,
    endpointDiscoveryEnabled: () => Promise.resolve(false),
    isClientEndpointDiscoveryEnabled: false,
  });
