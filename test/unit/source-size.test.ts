// Issue 42: no source file over about 400 lines without a reason at its top. A file over the limit
// passes only if the comment it opens with says why ("Longer than 400 lines because ..."); the
// remedy otherwise is to split it by responsibility.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const LIMIT = 400;
const SOURCE_DIRS = ['functions', 'lib', 'bin', 'local', 'load', 'scripts', 'config'];
const REASON = /Longer than 400 lines because \S/;

/** The product's and its tools' source files as git tracks them: no tests, no generated types. */
function sourceFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--', ...SOURCE_DIRS], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return listed
    .split('\0')
    .filter((path) => /\.(ts|js|mjs|cjs)$/.test(path))
    .filter((path) => !path.endsWith('.d.ts'))
    .filter((path) => !/(^|\/)test\//.test(path) && !/\.test\.[cm]?[jt]s$/.test(path))
    .filter((path) => !path.split('/').includes('node_modules'));
}

/** The lines `wc -l` counts. */
const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** The comment a file opens with (`//` lines or one block comment, after blank lines), '' if none. */
function openingComment(text: string): string {
  const body = text.replace(/^#!.*\n/, '').trimStart();
  if (body.startsWith('/*')) return body.slice(0, body.indexOf('*/') + 2);
  const lines: string[] = [];
  for (const line of body.split('\n')) {
    if (!line.trimStart().startsWith('//')) break;
    lines.push(line);
  }
  return lines.join('\n');
}

describe('source file size', () => {
  it('finds the source files', () => {
    const files = sourceFiles();
    expect(files).toEqual(expect.arrayContaining(['functions/saga/rules.ts', 'lib/commerce-stack.ts']));
    expect(files.some((path) => path.includes('/test/') || path.endsWith('.test.ts'))).toBe(false);
  });

  it(`keeps every file within ${LIMIT} lines, or says why at its top`, () => {
    const unexplained = sourceFiles()
      .map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }))
      .filter(({ text }) => lineCount(text) > LIMIT && !REASON.test(openingComment(text)))
      .map(({ path, text }) => `${path} (${lineCount(text)} lines)`);
    expect(unexplained).toEqual([]);
  });

  it('reads the reason only from the comment a file opens with', () => {
    expect(
      REASON.test(openingComment('// Longer than 400 lines because it is a table.\nconst a = 1;\n')),
    ).toBe(true);
    expect(
      REASON.test(
        openingComment('/**\n * Longer than 400 lines because it is a table.\n */\nconst a = 1;\n'),
      ),
    ).toBe(true);
    expect(
      REASON.test(openingComment('const a = 1;\n// Longer than 400 lines because it is a table.\n')),
    ).toBe(false);
    expect(REASON.test(openingComment('// Longer than 400 lines because \n'))).toBe(false);
  });
});
