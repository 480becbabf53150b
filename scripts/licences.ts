import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureLoadTools } from '../load/tools';

/**
 * Lists the licence of every package installed for the project (the root's
 * node_modules, the local cloud's and the load tools'), and fails on one whose
 * licence is not approved by the Open Source Initiative (DEVELOPERS.md, "Real
 * parts, open-source parts"). An SPDX expression passes when it can be met
 * with approved licences: one side of an OR, every side of an AND.
 *
 *   npm run licences            # the summary; exit 1 on a licence not approved
 *   npm run licences -- --all   # every package with its licence
 */

/** SPDX ids of OSI-approved licences (opensource.org/licenses) that packages here carry, and their kin. */
const OSI_APPROVED = new Set([
  '0BSD',
  'AFL-3.0',
  'Apache-2.0',
  'Artistic-2.0',
  'BlueOak-1.0.0',
  'BSD-1-Clause',
  'BSD-2-Clause',
  'BSD-3-Clause',
  'BSL-1.0',
  'EPL-1.0',
  'EPL-2.0',
  'GPL-2.0',
  'GPL-2.0-only',
  'GPL-2.0-or-later',
  'GPL-3.0',
  'GPL-3.0-only',
  'GPL-3.0-or-later',
  'ISC',
  'LGPL-2.1',
  'LGPL-2.1-only',
  'LGPL-2.1-or-later',
  'LGPL-3.0',
  'LGPL-3.0-only',
  'LGPL-3.0-or-later',
  'MIT',
  'MIT-0',
  'MPL-2.0',
  'NCSA',
  'PostgreSQL',
  'Python-2.0',
  'UPL-1.0',
  'Unlicense',
  'Zlib',
]);

/**
 * Packages whose licence is not OSI-approved, installed only because a tool
 * the project cannot do without depends on them, each with why. Neither is
 * in a Lambda bundle or in the local cloud that `npm start` runs. An entry
 * holds for its licence only: a package that changes licence is checked anew.
 */
const EXCEPTIONS: Record<string, { licence: string; why: string }> = {
  'caniuse-lite': {
    licence: 'CC-BY-4.0',
    why: "browser-support data (a Creative Commons licence for data, not code), loaded by Babel's target resolution inside Jest's own transform; tests only",
  },
  'yaml-js': {
    licence: 'WTFPL',
    why: 'a permissive licence the OSI never reviewed, on a YAML parser that Artillery 2 depends on directly; load tools only (load/)',
  },
};

const ROOTS = ['node_modules', 'local/node_modules', 'load/node_modules'];

interface Installed {
  readonly name: string;
  readonly version: string;
  readonly licence: string;
  readonly where: string;
}

function installed(projectDir: string): Installed[] {
  const found = new Map<string, Installed>();
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir)) {
      if (entry.startsWith('.')) continue;
      const path = join(dir, entry);
      if (entry.startsWith('@')) {
        walk(path);
        continue;
      }
      const manifest = join(path, 'package.json');
      if (existsSync(manifest)) {
        const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
          name?: string;
          version?: string;
          license?: string | { type?: string };
          licenses?: ({ type?: string } | string)[];
        };
        if (pkg.name && pkg.version) {
          const licence =
            typeof pkg.license === 'string'
              ? pkg.license
              : (pkg.license?.type ??
                (pkg.licenses ?? []).map((l) => (typeof l === 'string' ? l : l.type)).join(' OR '));
          found.set(`${pkg.name}@${pkg.version}`, {
            name: pkg.name,
            version: pkg.version,
            licence: licence || 'UNKNOWN',
            where: path.slice(projectDir.length + 1),
          });
        }
      }
      walk(join(path, 'node_modules'));
    }
  };
  for (const root of ROOTS) walk(join(projectDir, root));
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Whether an SPDX expression can be met with OSI-approved licences. */
export function approved(expression: string): boolean {
  const text = expression.trim().replace(/^\((.*)\)$/s, '$1');
  const or = splitTop(text, ' OR ');
  if (or.length > 1) return or.some(approved);
  const and = splitTop(text, ' AND ');
  if (and.length > 1) return and.every(approved);
  if (/^\(.*\)$/s.test(text)) return approved(text);
  return OSI_APPROVED.has(text.replace(/\+$/, ''));
}

/** Splits at `separator` outside parentheses. */
function splitTop(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (depth === 0 && text.startsWith(separator, i)) {
      parts.push(text.slice(start, i));
      start = i + separator.length;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function main() {
  // The load tools are the project's too, installed on first use: check them as well.
  ensureLoadTools();
  const packages = installed(resolve(__dirname, '..'));
  const byLicence = new Map<string, number>();
  for (const p of packages) byLicence.set(p.licence, (byLicence.get(p.licence) ?? 0) + 1);
  if (process.argv.includes('--all')) {
    for (const p of packages) console.log(`${`${p.name}@${p.version}`.padEnd(60)} ${p.licence}`);
  }
  console.log(`${packages.length} packages installed, by licence:`);
  for (const [licence, count] of [...byLicence].sort((a, b) => b[1] - a[1])) {
    console.log(
      `  ${String(count).padStart(4)}  ${licence}${approved(licence) ? '' : '  (not OSI-approved)'}`,
    );
  }
  const refused: Installed[] = [];
  for (const p of packages) {
    if (approved(p.licence)) continue;
    const exception = EXCEPTIONS[p.name];
    if (exception?.licence === p.licence) {
      console.log(`  excepted: ${p.name}@${p.version} (${p.licence}): ${exception.why}`);
      continue;
    }
    refused.push(p);
  }
  if (refused.length > 0) {
    for (const p of refused)
      console.error(`NOT OSI-APPROVED: ${p.name}@${p.version} (${p.licence}) in ${p.where}`);
    process.exit(1);
  }
  console.log('every licence is OSI-approved, or excepted above with its reason');
}

if (require.main === module) main();
