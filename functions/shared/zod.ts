/**
 * zod as every contract imports it: its tree-shakable API (`zod/mini`: what
 * the contracts use of it is about 35 KB of a minified bundle, where the
 * chained API, which esbuild cannot shake, took 100 KB), with the English
 * messages that the chained API loads by itself (a `400`'s
 * `details[].message`). Importing zod from here makes sure they are loaded
 * before any schema parses. The `config` call is this module's side effect:
 * `functions/package.json` names the module in `sideEffects`, or esbuild
 * drops the call and every message reads "Invalid input".
 */
import { en } from 'zod/locales';
import { config } from 'zod/mini';

config(en());

export * from 'zod/mini';
