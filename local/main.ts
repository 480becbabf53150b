import inspector from 'node:inspector';
import { startLocalCloud } from './cloud';
import { parseCommandLine } from './command-line';
import { watchSources } from './reload';
import { START_COMMAND } from './start-command';
import { parseFaults } from './stepfunctions';
import { appSources, PROJECT_ROOT } from './synth';

// `npm start`: runs the synthesized app on 127.0.0.1 until Ctrl-C (its options: start-command.ts).

/**
 * The inspector of this process, where a debugger finds the functions too: each sandbox is a worker
 * thread of it (VS Code attaches to them itself; Chrome's DevTools lists them under the process).
 * Already open when a debugger started the process (VS Code's launch configuration): nothing to do.
 */
function openInspector(port: number) {
  if (inspector.url() === undefined) inspector.open(port, '127.0.0.1');
  console.log(`[local] debugger: attach to ${inspector.url()} (VS Code: "Attach to the local cloud")`);
}

/** What `--watch` watches: the app's sources (cdk.json's `watch.include`, as for `cdk watch`). */
const WATCHED = appSources();

async function main() {
  const { values } = parseCommandLine(START_COMMAND);
  if (values.debug) openInspector(Number(values['inspect-port']));
  const context: Record<string, string> = {};
  if (values['reservation-ttl-seconds']) context.reservationTtlSeconds = values['reservation-ttl-seconds'];
  if (values['saga-deadline-seconds']) context.sagaDeadlineSeconds = values['saga-deadline-seconds'];
  if (values['sweeper-grace-seconds']) context.sweeperGraceSeconds = values['sweeper-grace-seconds'];
  const cloud = await startLocalCloud({
    port: Number(values.port),
    awsPort: Number(values['aws-port'] ?? (Number(values.port) === 0 ? 0 : Number(values.port) + 1)),
    stage: values.stage,
    context,
    ...(values['assembly-dir'] ? { assemblyDir: values['assembly-dir'] } : {}),
    ...(values['data-dir'] ? { dataDir: values['data-dir'] } : {}),
    ...(values['schedule-interval-ms'] ? { scheduleIntervalMs: Number(values['schedule-interval-ms']) } : {}),
    faults: parseFaults(values.faults),
    echoFunctionLogs: values['echo-function-logs'],
    debug: values.debug,
    ...(values['max-sandboxes'] ? { maxSandboxesPerFunction: Number(values['max-sandboxes']) } : {}),
    ...(values['max-total-sandboxes'] ? { maxSandboxes: Number(values['max-total-sandboxes']) } : {}),
    ...(values['max-lent-sandboxes'] ? { maxLentSandboxes: Number(values['max-lent-sandboxes']) } : {}),
    admission: {
      ...(values['max-queue-wait-ms'] ? { maxQueueWaitMs: Number(values['max-queue-wait-ms']) } : {}),
      ...(values['max-saga-backlog-ms'] ? { maxSagaBacklogMs: Number(values['max-saga-backlog-ms']) } : {}),
    },
  });
  const { wiring } = cloud;
  console.log(
    [
      // The project runs on its own Node 22 (node_modules/.bin/node), whatever Node the machine has.
      `[local] Node.js ${process.version}`,
      `[local] ${wiring.functions.length} functions, ${wiring.routes.length} routes, ${wiring.tables.length} tables, ` +
        `${wiring.eventSourceMappings.length} stream mappings, ${wiring.rules.length} rules`,
      `[local] AWS endpoint (DynamoDB, EventBridge) ${cloud.awsEndpoint}; counters at ${cloud.awsEndpoint}/_local/stats`,
      `[local] started in ${(cloud.startupMs / 1000).toFixed(1)} s (${Object.entries(cloud.startupPhases)
        .map(([phase, ms]) => `${phase} ${(ms / 1000).toFixed(1)} s`)
        .join(', ')})`,
      ...(values['data-dir'] ? [`[local] data kept in ${values['data-dir']}`] : []),
      `[local] saga console ${cloud.consoleUrl}`,
      // The local cloud is the issuer of the template's JWT authorizer (README, "Who may do what").
      `[local] issuer ${cloud.issuer.issuer} (audience ${cloud.issuer.audience}); a token: curl -s -X POST ` +
        `${cloud.issuer.tokenEndpoint} -d '{"sub":"alice","scope":"commerce/shop"}' (or commerce/admin)`,
      `[local] API listening on ${cloud.url}`,
    ].join('\n'),
  );
  const stopWatching = values.watch
    ? watchSources(PROJECT_ROOT, WATCHED, async (files) => {
        console.log(`[local] changed: ${files.slice(0, 5).join(', ')}${files.length > 5 ? ', …' : ''}`);
        try {
          const changes = await cloud.reload();
          if (changes.other.length > 0) {
            console.log(
              `[local] restart npm start to apply: ${changes.other.join(', ')} ` +
                '(nothing was applied; the functions run the code they ran before)',
            );
          } else if (changes.code.size > 0) {
            console.log(
              `[local] new code for ${[...changes.code.keys()].join(', ')}: ` +
                'their next invocations start new sandboxes on it (the tables and their data kept)',
            );
          } else console.log('[local] the synthesized app did not change');
        } catch (error) {
          // A synth failure (a type error, a cdk-nag finding) leaves the cloud running what it ran.
          console.error(
            `[local] re-synthesis failed; still running the previous code:\n${(error as Error).message}`,
          );
        }
      })
    : undefined;
  if (stopWatching) console.log(`[local] watching ${WATCHED.join(', ')} for changes`);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    stopWatching?.();
    console.log(`[local] ${signal}: stopping`);
    await cloud.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((error: Error) => {
  console.error(`[local] failed to start: ${error.message}`);
  process.exit(1);
});
