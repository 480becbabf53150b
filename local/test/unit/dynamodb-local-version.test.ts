import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The launcher of DynamoDB Local (local/dynamodb/Launcher.java) reaches into
 * private fields and the SQLite schema of one version of it; the pom must
 * fetch that version. Bumping DynamoDB Local in the pom alone fails here,
 * before a local cloud starts a server half set up.
 */
const DIR = join(__dirname, '..', '..', 'dynamodb');

const only = (text: string, pattern: RegExp, what: string) => {
  const matches = [...text.matchAll(pattern)];
  if (matches.length !== 1) throw new Error(`expected one ${what}, found ${matches.length}`);
  return matches[0]![1]!;
};

test('the pom fetches the DynamoDB Local version its launcher was written for', () => {
  const pom = readFileSync(join(DIR, 'pom.xml'), 'utf8');
  const launcher = readFileSync(join(DIR, 'Launcher.java'), 'utf8');
  const fetched = only(pom, /<dynamodb-local\.version>([^<]+)<\/dynamodb-local\.version>/g, 'pom version');
  // The pom's dependency is that property, not a version written beside it.
  expect(
    only(pom, /<artifactId>DynamoDBLocal<\/artifactId>\s*<version>([^<]+)<\/version>/g, 'dependency'),
  ).toMatch(/^\$\{dynamodb-local\.version\}$/);
  const writtenFor = only(
    launcher,
    /static final String DYNAMODB_LOCAL_VERSION = "([^"]+)";/g,
    'launcher version',
  );
  expect(fetched).toBe(writtenFor);
});
