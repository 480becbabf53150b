import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const pomHashOf = (pomDir: string) =>
  createHash('sha256')
    .update(readFileSync(join(pomDir, 'pom.xml')))
    .digest('hex');

/** The marker `fetchMavenDependencies` leaves in `outDir`; it changes when the pom does. */
const fetchedMarker = (outDir: string) => join(outDir, '.complete');

/** Whether `outDir` holds the dependencies of the pom in `pomDir` as it is now. */
function isFetched(pomDir: string, outDir: string): boolean {
  const marker = fetchedMarker(outDir);
  return existsSync(marker) && readFileSync(marker, 'utf8').split('\n')[1] === pomHashOf(pomDir);
}

function mavenCommand(pomDir: string, outDir: string) {
  return {
    args: [
      '-q',
      '-B',
      '-f',
      join(pomDir, 'pom.xml'),
      'dependency:copy-dependencies',
      `-DoutputDirectory=${outDir}`,
      '-Dmdep.useRepositoryLayout=false',
    ],
    // The caller's MAVEN_OPTS (a proxy, or -Dmaven.repo.local=...) are kept; the heap is capped.
    env: { ...process.env, MAVEN_OPTS: `${process.env.MAVEN_OPTS ?? ''} -Xmx512m`.trim() },
  };
}

function prepareOutDir(outDir: string) {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
}

function checkFetched(pomDir: string, outDir: string, error: Error | undefined, status: number | null) {
  if (error) throw new Error(`Maven could not run (is it installed?): ${error.message}`);
  if (status !== 0) throw new Error(`Maven failed fetching ${pomDir}/pom.xml (exit ${status})`);
  if (readdirSync(outDir).length === 0) throw new Error(`Maven fetched nothing for ${pomDir}/pom.xml`);
  writeFileSync(fetchedMarker(outDir), `${new Date().toISOString()}\n${pomHashOf(pomDir)}\n`);
}

/**
 * Copies the jars the pom in `pomDir` depends on (event-ruler's, for the tests
 * that use it as an oracle) into `outDir` with Maven, once. A marker file
 * records success (and the pom's hash) so that later runs cost nothing and
 * work offline; when the pom
 * changes, `outDir` is emptied and fetched again, so that jars of an old
 * version never stay on the class path beside the new ones.
 */
export function fetchMavenDependencies(pomDir: string, outDir: string): string {
  if (isFetched(pomDir, outDir)) return outDir;
  prepareOutDir(outDir);
  const { args, env } = mavenCommand(pomDir, outDir);
  const result = spawnSync('mvn', args, { stdio: ['ignore', 'inherit', 'inherit'], env });
  checkFetched(pomDir, outDir, result.error, result.status);
  return outDir;
}
