import { basename, join } from 'node:path';

/** Where the local cloud keeps its run directories and what the tests fetch (git-ignored). */
export const CACHE_DIR = join(__dirname, '.cache');

/**
 * Where a cloud run from the assembly in `assemblyDir` keeps its function logs and dead letters by
 * default: one directory per assembly, so that test clouds and `npm start` do not mix.
 */
export const runDirOf = (assemblyDir: string) => join(CACHE_DIR, 'run', basename(assemblyDir));
