import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { CommerceStack } from '../../lib/commerce-stack';
import { stageConfig } from '../../lib/stage-config';
import { TEST_SETTINGS, UNVALIDATED } from './synth';

/**
 * The functions' bundles as `cdk synth` makes them (esbuild run for real, no
 * Docker): their size, their source maps per stage, and what is kept out of
 * them. Issue 42's bar is 300 KB minified per function (cold start on AWS);
 * what each lever bought is in docs/decisions/0008, the sizes in docs/benchmarks.md.
 */
const BAR_BYTES = 300_000;

interface Bundle {
  readonly name: string;
  readonly files: Readonly<Record<string, number>>;
  readonly code: string;
  /** The asset's directory (its index.js.map, where a stage ships one). */
  readonly dir: string;
}

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

/** Each function's asset after a bundling synth of `stage`: its files and sizes, and its handler's code. */
function bundlesOf(stage: string, context: Record<string, string> = {}): Bundle[] {
  const outdir = mkdtempSync(join(tmpdir(), `commerce-bundles-${stage}-`));
  outdirs.push(outdir);
  // As the CLI synthesizes: each function's asset named in its metadata.
  const app = new App({
    outdir,
    context: { ...context, 'aws:cdk:enable-asset-metadata': true },
    ...UNVALIDATED,
  });
  const config = stageConfig(stage, (key) => context[key], TEST_SETTINGS);
  const stack = new CommerceStack(app, `Commerce-${stage}`, { config });
  const assembly = app.synth();
  const template = JSON.parse(
    readFileSync(assembly.getStackByName(stack.stackName).templateFullPath, 'utf8'),
  );
  return Object.entries(
    template.Resources as Record<string, { Type: string; Metadata?: Record<string, string> }>,
  )
    .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
    .map(([id, r]) => {
      const dir = join(outdir, r.Metadata!['aws:asset:path']!);
      const files = Object.fromEntries(readdirSync(dir).map((f) => [f, statSync(join(dir, f)).size]));
      return {
        name: id.replace(/Function[0-9A-F]{8}$/, ''),
        files,
        code: readFileSync(join(dir, 'index.js'), 'utf8'),
        dir,
      };
    });
}

// Bundling every function takes esbuild a few seconds per stage here.
let dev: Bundle[];
let prod: Bundle[];
beforeAll(() => {
  dev = bundlesOf('dev');
  prod = bundlesOf('prod');
}, 240_000);

test('every function is one minified CommonJS bundle within the bar', () => {
  expect(dev.length).toBeGreaterThan(0);
  for (const bundles of [dev, prod]) {
    for (const { name, files } of bundles) {
      expect({ name, bytes: files['index.js'], within: files['index.js']! <= BAR_BYTES }).toEqual({
        name,
        bytes: files['index.js'],
        within: true,
      });
    }
  }
});

test('dev ships each bundle with its source map; prod ships the bundle alone', () => {
  for (const { name, files } of dev)
    expect({ name, files: Object.keys(files).sort() }).toEqual({
      name,
      files: ['index.js', 'index.js.map'],
    });
  for (const { name, files } of prod)
    expect({ name, files: Object.keys(files) }).toEqual({ name, files: ['index.js'] });
});

/** The one function that calls no AWS API: it serves the OpenAPI document it carries. */
const WITHOUT_AWS_CALLS = 'DocsApi';

test("no bundle loads Node.js's own modules as ES modules (docs/decisions/0010)", () => {
  // An ES module import of a built-in module, static or import(), runs every getter of its exports
  // (node:http's load undici): tens of ms of CPU in every cold start. A CommonJS require runs none.
  for (const { name, code } of [...dev, ...prod]) {
    expect({
      name,
      commonJs: code.includes('module.exports'),
      dynamicImports: code.match(/\bimport\s*\(/g) ?? [],
    }).toEqual({
      name,
      commonJs: true,
      dynamicImports: [],
    });
    expect({ name, requiresHttp: code.includes('require("node:http")') }).toEqual({
      name,
      requiresHttp: name !== WITHOUT_AWS_CALLS,
    });
  }
});

test('AWS is called without the SDK: no bundle has an SDK client (docs/decisions/0011)', () => {
  for (const { name, code } of prod) {
    // The SDK's user agent, which every SDK client sends, its clients' protocol names, its
    // credential chain (whose debug messages minification keeps), and what the bundles once took
    // stand-ins for: the event stream headers and DynamoDB's endpoint cache.
    expect({
      name,
      sdkClient: code.includes('aws-sdk-js'),
      protocols: ['com.amazonaws.dynamodb', 'com.amazonaws.sfn', 'com.amazonaws.eventbridge'].filter((p) =>
        code.includes(p),
      ),
      credentialChain: code.includes('@aws-sdk/credential-provider'),
      eventStreams: code.includes(':message-type'),
      endpointCache: /mnemonist\/lru-cache|endpointDiscoveryMiddleware/.test(code),
    }).toEqual({
      name,
      sdkClient: false,
      protocols: [],
      credentialChain: false,
      eventStreams: false,
      endpointCache: false,
    });
  }
});

test("a dev bundle's source map maps the prod bundle too: the same code", () => {
  // How a prod stack trace is read (docs/operations.md): the bundles keep no names, and prod ships no map.
  const devCode = Object.fromEntries(dev.map((b) => [b.name, b.code]));
  for (const { name, code } of prod) {
    const same = devCode[name]!.replace(/\n\/\/# sourceMappingURL=index\.js\.map\n?$/, '\n') === code;
    expect({ name, same }).toEqual({ name, same: true });
  }
});

test('no X-Ray SDK is bundled, and every AWS call still carries the trace (docs/decisions/0007)', () => {
  for (const { name, code } of prod) {
    expect({ name, xraySdk: /AWSXRay|cls-hooked/.test(code) }).toEqual({ name, xraySdk: false });
    // Lambda's trace id (_X_AMZN_TRACE_ID) sent as X-Amzn-Trace-Id on each call, as the SDK's
    // recursion-detection middleware sent it, so Step Functions and EventBridge continue the invocation's trace.
    expect({ name, propagates: code.includes('_X_AMZN_TRACE_ID') }).toEqual({ name, propagates: true });
  }
});

/** Characters per line of a bundle: thousands when minified, tens when readable. */
const meanLineLength = (code: string) => code.length / code.split('\n').length;

test('a debug build (npm start -- --debug) is readable and mapped to our sources', () => {
  const debug = bundlesOf('dev', { debugBundles: 'true' });
  expect(debug.map((b) => b.name).sort()).toEqual(dev.map((b) => b.name).sort());
  for (const { name, files, code, dir } of debug) {
    // Not minified: a statement a line, where a minified bundle runs to thousands of characters a line.
    expect({ name, readable: meanLineLength(code) < 100 }).toEqual({ name, readable: true });
    expect({ name, files: Object.keys(files).sort() }).toEqual({
      name,
      files: ['index.js', 'index.js.map'],
    });
    expect({ name, linked: code.includes('//# sourceMappingURL=index.js.map') }).toEqual({
      name,
      linked: true,
    });
    // Its map names the project's own TypeScript, so that a breakpoint set there binds.
    const { sources } = JSON.parse(readFileSync(join(dir, 'index.js.map'), 'utf8')) as { sources: string[] };
    const ours = sources.filter((s) => /(^|\/)functions\/\w+\/.+\.ts$/.test(s));
    expect({ name, mapsOurSources: ours.length > 0 }).toEqual({ name, mapsOurSources: true });
  }
  // The prod build of the same functions is minified.
  for (const { name, code } of prod)
    expect({ name, minified: meanLineLength(code) > 1_000 }).toEqual({ name, minified: true });
}, 240_000);
