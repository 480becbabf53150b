/**
 * The command line of the project's tools (`npm start`, `npm run load`, `seed`, `flash-sale`,
 * `chaos`, `fuzz`): one table of options per command, from which both the parser (Node's
 * `util.parseArgs`) and the `--help` text are made, so that neither can name an option the other
 * does not know.
 *
 * `--help` (or `-h`) prints the usage, every option with its default and meaning, and examples,
 * then exits 0 before the command does anything. A command line the parser refuses (an unknown
 * option, an option without its value, an unexpected argument) prints the error and the usage to
 * stderr and exits 2.
 */
import { writeSync } from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  /** One line: what it does. */
  readonly description: string;
  /** The value the parser gives when the option is absent. */
  readonly default?: string | boolean;
  /** The default as the help states it when it is not a fixed value (e.g. "the API's port plus one"). */
  readonly defaultText?: string;
  /** The value's name in the usage (`--port N`); default `VALUE`. */
  readonly value?: string;
  readonly short?: string;
}

export interface CommandSpec {
  /** How it is run, e.g. `npm run chaos -- [options]`. */
  readonly usage: string;
  /** A few lines: what it does. */
  readonly description: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Positional arguments (a subcommand), each with its meaning; none when absent. */
  readonly positionals?: Readonly<Record<string, string>>;
  /** Environment variables it reads, each with its meaning. */
  readonly environment?: Readonly<Record<string, string>>;
  readonly examples: readonly string[];
}

type ValueOf<O extends OptionSpec> = O['type'] extends 'boolean' ? boolean : string;
export type Values<Options extends Readonly<Record<string, OptionSpec>>> = {
  -readonly [K in keyof Options]: Options[K] extends { readonly default: string | boolean }
    ? ValueOf<Options[K]>
    : ValueOf<Options[K]> | undefined;
};

const HELP: OptionSpec = { type: 'boolean', short: 'h', description: 'print this help and exit' };

const optionsOf = (spec: CommandSpec) => ({ ...spec.options, help: HELP });

function defaultOf(option: OptionSpec): string | undefined {
  if (option.defaultText !== undefined) return option.defaultText;
  if (option.default === undefined || option.default === false) return undefined;
  return String(option.default);
}

/** The help: usage, description, arguments, options with defaults, environment, examples. */
export function helpText(spec: CommandSpec): string {
  const table = (rows: [string, string][]) => {
    const width = Math.max(...rows.map(([left]) => left.length));
    return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
  };
  const options = Object.entries(optionsOf(spec)).map(([name, o]): [string, string] => {
    const flag = `${o.short ? `-${o.short}, ` : ''}--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`;
    const fallback = defaultOf(o);
    return [flag, `${o.description}${fallback === undefined ? '' : ` (default: ${fallback})`}`];
  });
  return [
    `Usage: ${spec.usage}`,
    '',
    spec.description,
    ...(spec.positionals ? ['', 'Arguments:', ...table(Object.entries(spec.positionals))] : []),
    '',
    'Options:',
    ...table(options),
    ...(spec.environment ? ['', 'Environment:', ...table(Object.entries(spec.environment))] : []),
    '',
    'Examples:',
    ...spec.examples.map((e) => `  ${e}`),
    '',
  ].join('\n');
}

/** The help asked for anywhere on the command line (before `--`). */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/**
 * Parses `args` by the command's table; on `--help` prints the help and exits 0, on a refused command
 * line prints the error and the usage to stderr and exits 2.
 */
export function parseCommandLine<const S extends CommandSpec>(
  spec: S,
  args: readonly string[] = process.argv.slice(2),
): { values: Values<S['options']>; positionals: string[] } {
  if (asksForHelp(args)) {
    // Written synchronously: the process exits at once (an asynchronous pipe would lose the text).
    writeSync(1, helpText(spec));
    process.exit(0);
  }
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: Object.fromEntries(
        Object.entries(spec.options).map(([name, o]) => [
          name,
          {
            type: o.type,
            ...(o.short ? { short: o.short } : {}),
            ...(o.default === undefined ? {} : { default: o.default }),
          },
        ]),
      ) as ParseArgsConfig['options'],
      allowPositionals: spec.positionals !== undefined,
      strict: true,
    });
    return { values: values as Values<S['options']>, positionals };
  } catch (error) {
    return usageError(spec, (error as Error).message);
  }
}

/** A command line the command refuses: the error and the usage to stderr, exit code 2. */
export function usageError(spec: CommandSpec, message: string): never {
  writeSync(2, `error: ${message}\n\n${helpText(spec)}`);
  process.exit(2);
}
