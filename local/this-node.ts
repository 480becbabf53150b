import { delimiter, dirname } from 'node:path';

/**
 * The environment for a child process that runs Node scripts (`cdk`, `tsx`,
 * Artillery: each starts with `#!/usr/bin/env node`): the directory of the
 * Node running this process first on PATH, so the child and its own children
 * run on the same Node (the project's Node 22 from node_modules) rather than
 * on whichever Node the shell finds first, even when this process was not
 * started by an npm script (which puts node_modules/.bin first itself).
 */
export function withThisNode(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, PATH: [dirname(process.execPath), env.PATH].filter(Boolean).join(delimiter) };
}
