import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the local cloud keeps what it fetches (git-ignored). */
export const CACHE_DIR = join(__dirname, '.cache');

/**
 * Copies the dependencies of the pom in `pomDir` (jars and native libraries)
 * into `outDir` with Maven, once. A marker file records success (and the pom's
 * hash) so that later starts cost nothing and work offline; when the pom
 * changes, `outDir` is emptied and fetched again, so that jars of an old
 * version never stay on the class path beside the new ones.
 */
export function fetchMavenDependencies(pomDir: string, outDir: string): string {
  const marker = join(outDir, '.complete');
  const pomHash = createHash('sha256')
    .update(readFileSync(join(pomDir, 'pom.xml')))
    .digest('hex');
  if (existsSync(marker) && readFileSync(marker, 'utf8').split('\n')[1] === pomHash) return outDir;
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const result = spawnSync(
    'mvn',
    [
      '-q',
      '-B',
      '-f',
      join(pomDir, 'pom.xml'),
      'dependency:copy-dependencies',
      `-DoutputDirectory=${outDir}`,
      '-Dmdep.useRepositoryLayout=false',
    ],
    { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, MAVEN_OPTS: '-Xmx512m' } },
  );
  if (result.error) throw new Error(`Maven could not run (is it installed?): ${result.error.message}`);
  if (result.status !== 0) throw new Error(`Maven failed fetching ${pomDir}/pom.xml (exit ${result.status})`);
  if (readdirSync(outDir).length === 0) throw new Error(`Maven fetched nothing for ${pomDir}/pom.xml`);
  writeFileSync(marker, `${new Date().toISOString()}\n${pomHash}\n`);
  return outDir;
}
