import { Command, CommanderError, Option } from 'commander';
import { benchCommand } from './commands/bench';
import { batchCommand, callCommand, notifyCommand, reportError } from './commands/call';
import { enqueueCommand, jobShowCommand, type EnqueueFlags } from './commands/enqueue';
import { genCommand, type GenFlags } from './commands/gen';
import { namespaceRmCommand, type NamespaceRmFlags } from './commands/namespace';
import { cancelCommand, inflightCommand, statusCommand } from './commands/inflight';
import { permissionsCommand } from './commands/permissions';
import { newServiceCommand } from './commands/new-service';
import { startCommand } from './commands/start';
import { replCommand } from './repl/shell';
import { servicesCommand } from './commands/services';
import { ExitCode, UsageError, type ExitCodeValue } from './errors';
import { addOperatorCommands } from './operator-commands';
import { nonNegativeInt, positiveInt, type Act } from './program-args';
import { wantColor } from './format';
import { Session, type Io, type Settings } from './session';
import { EnvError, envGiven, envValue } from '@warren/config';

/** Defaults of everything the environment or a flag can set; docs/cli.md has the table. */
export const cliDefaults = {
  amqpUrl: 'amqp://guest:guest@127.0.0.1:5672',
  redisUrl: 'redis://127.0.0.1:6379',
  namespace: 'warren',
  gateway: 'http://127.0.0.1:18001',
  connectTimeoutMs: 5000,
  /** Beyond the announce-now round (about half a second), which every v1 instance answers. */
  servicesWaitMs: 0,
} as const;

interface GlobalFlags {
  via?: string;
  json?: boolean;
  color?: boolean;
  namespace?: string;
  amqpUrl?: string;
  redisUrl?: string;
  gateway?: string;
  keyPrefix?: string;
  connectTimeout?: number;
}

/** A flag's text read by its variable's rule (@warren/config), its error naming the flag. */
function flagAs<N extends 'AMQP_URL'>(flag: string, name: N, text: string): ReturnType<typeof envGiven<N>> {
  try {
    return envGiven({ [name]: text }, name);
  } catch (err) {
    throw err instanceof EnvError ? new UsageError(`${flag}${err.message.slice(name.length)}`) : err;
  }
}

/** Flags win over the environment, the environment over the defaults. */
export function resolveSettings(io: Io, g: GlobalFlags): Settings {
  const namespace = g.namespace ?? envGiven(io.env, 'WARREN_NAMESPACE') ?? cliDefaults.namespace;
  const gatewayNamed = g.gateway ?? envGiven(io.env, 'WARREN_GATEWAY');
  const gateway = gatewayNamed ?? cliDefaults.gateway;
  const json = g.json === true;
  // Checked when a command first needs it (Session.via), where a usage error is reported like any other.
  const via = (g.via ?? envValue(io.env, 'WARREN_VIA')).toLowerCase();
  // The flag is read by AMQP_URL's rule (amqp:// or amqps:// only), so an http:// URL is refused at once, not retried.
  const amqpNamed = g.amqpUrl === undefined ? envGiven(io.env, 'AMQP_URL') : flagAs('--amqp-url', 'AMQP_URL', g.amqpUrl);
  return {
    via,
    amqpExplicit: amqpNamed !== undefined,
    json,
    color: g.color !== false && !json && wantColor(io.stdout.isTTY === true, io.env),
    namespace,
    amqpUrls: (amqpNamed ?? [cliDefaults.amqpUrl]).map((u) => u.trim()).filter(Boolean),
    redisUrl: g.redisUrl ?? envGiven(io.env, 'REDIS_URL') ?? cliDefaults.redisUrl,
    // The services' convention: in-flight keys are prefixed with the namespace unless told otherwise.
    keyPrefix: g.keyPrefix ?? envGiven(io.env, 'WARREN_KEY_PREFIX') ?? namespace,
    gateway: gateway === 'off' || gateway === 'none' ? undefined : gateway,
    gatewayExplicit: gatewayNamed !== undefined,
    connectTimeoutMs: g.connectTimeout ?? cliDefaults.connectTimeoutMs,
  };
}

/**
 * Builds the `warren` program. Each action runs in a {@link Session} that is
 * closed afterwards; its exit code is handed to `setCode`.
 */
export function buildProgram(io: Io, setCode: (code: ExitCodeValue) => void, stop: AbortSignal): Command {
  const program = new Command('warren');
  program
    .description('Call, watch and load-test Warren services over RabbitMQ.')
    .version('0.1.0')
    .option('--json', 'machine-readable JSON output (one JSON value or one per line)')
    .option('--no-color', 'no colours, even on a terminal (NO_COLOR works too)')
    .option('-n, --namespace <ns>', `namespace of exchanges and queues (env WARREN_NAMESPACE, default ${cliDefaults.namespace})`)
    .option('--amqp-url <url>', 'RabbitMQ URL(s), comma-separated (env AMQP_URL)')
    .option('--redis-url <url>', 'Redis of the in-flight store (env REDIS_URL)')
    .option('--key-prefix <prefix>', 'in-flight key prefix (env WARREN_KEY_PREFIX, default: the namespace)')
    .option('--gateway <url>', `broker HTTP gateway, or "off" (env WARREN_GATEWAY, default ${cliDefaults.gateway})`)
    .option('--via <how>', 'amqp (RabbitMQ and Redis), gateway (POST /rpc on --gateway: an embedded system), or auto: the gateway when no AMQP URL is given and it runs embedded (env WARREN_VIA, default auto)')
    .addOption(new Option('--connect-timeout <ms>', 'give up connecting after this long').argParser(positiveInt).default(cliDefaults.connectTimeoutMs))
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (t) => void io.stdout.write(t), writeErr: (t) => void io.stderr.write(t) });

  /** Runs an action in a session: reports errors, records the exit code, closes connections. */
  const act: Act =
    <A extends unknown[]>(work: (s: Session, ...args: A) => Promise<ExitCodeValue>) =>
    async (...args: A): Promise<void> => {
      let s: Session;
      try {
        s = new Session(io, resolveSettings(io, program.opts<GlobalFlags>()));
      } catch (err) {
        // A variable or flag that does not parse (EnvError names it): a usage error, before any session exists.
        const usage = err instanceof EnvError ? new UsageError(err.message) : err;
        if (!(usage instanceof UsageError)) throw usage;
        io.stderr.write(`error ${usage.code}: ${usage.message}\n`);
        return setCode(usage.exitCode);
      }
      try {
        setCode(await work(s, ...args));
      } catch (err) {
        setCode(reportError(s, err));
      } finally {
        await s.close();
      }
    };

  program
    .command('call')
    .description('call a method and print its result as JSON; exits 1 with the error code on an error answer')
    .argument('<method>', 'method name, e.g. add')
    .argument('[params...]', 'one JSON array/object, or positional words each parsed as JSON (else taken as a string)')
    .addOption(new Option('-t, --timeout <ms>', 'deadline of the call').argParser(positiveInt))
    .option('--id <id>', 'JSON-RPC id to send (a number when numeric)')
    .option('--persistent', 'persist the request to disk (for durable job queues)')
    .option('--show-id', 'print the call id (for status/cancel) on stderr first')
    .option('--progress', 'show the progress the handler reports (a bar on a terminal, else a line per report)')
    .option('--no-progress', 'never show progress')
    .option('--at <time>', 'start no earlier than this time (ISO 8601, e.g. 2030-01-01T02:00:00Z); the deadline counts from then')
    .option('--in <duration>', 'start after this long (90s, 10m, 1h30m, 2d, or ms); the deadline counts from then')
    .addHelpText('after', '\nExamples:\n  warren call add 4 5\n  warren call subtract \'{"minuend":42,"subtrahend":23}\'\n  warren call calculate \'{"expression":"1+3+6"}\'\n  warren call add -- -5 3          (use -- before negative numbers)\n  warren call report.render \'{"size":5}\' --persistent --timeout 60000 --show-id')
    .action(act((s, method: string, params: string[], flags: { timeout?: number; id?: string; persistent?: boolean; showId?: boolean; progress?: boolean; at?: string; in?: string }) => callCommand(s, method, params, flags)));

  program
    .command('notify')
    .description('publish a notification (nobody answers; every subscribing service gets it)')
    .argument('<method>', 'notification name, e.g. notify_hello')
    .argument('[params...]', 'as for call')
    .addOption(new Option('-t, --timeout <ms>', 'wait this long for RabbitMQ to confirm').argParser(positiveInt))
    .option('--persistent', 'persist the message to disk')
    .option('--at <time>', 'deliver no earlier than this time (ISO 8601); waits in RabbitMQ, durably')
    .option('--in <duration>', 'deliver after this long (90s, 10m, 1h30m, 2d, or ms)')
    .addHelpText('after', '\nExamples:\n  warren notify notify_hello 7\n  warren notify logMessage "User logged in"\n  warren notify logMessage "later" --in 10m\nA notification nobody subscribes to is dropped: exits 1 and says so. To queue a job on a method, use enqueue.')
    .action(act((s, method: string, params: string[], flags: { timeout?: number; persistent?: boolean; at?: string; in?: string }) => notifyCommand(s, method, params, flags)));

  program
    .command('enqueue')
    .description("queue a job on a method's queue: persistent, confirmed, nobody waits for it; prints its id (docs/jobs.md)")
    .argument('<method>', 'method name, e.g. report.render')
    .argument('[params...]', 'as for call')
    .option('--id <id>', 'the job id: enqueueing an id already queued, running or kept is a no-op that says so (default: a random id)')
    .addOption(new Option('-t, --timeout <ms>', 'time the job has to finish, from when it is due (default 3600000)').argParser(positiveInt))
    .option('--at <time>', 'start no earlier than this time (ISO 8601); waits in RabbitMQ, durably')
    .option('--in <duration>', 'start after this long (90s, 10m, 1h30m, 2d, or ms)')
    .addHelpText('after', '\nExamples:\n  warren enqueue report.render \'{"size":2}\' --in 3s\n  warren enqueue report.render \'{"size":2}\' --id report-7\n  warren job show report-7')
    .action(act((s, method: string, params: string[], flags: EnqueueFlags) => enqueueCommand(s, method, params, flags)));

  program
    .command('job')
    .description("a job's state and outcome")
    .command('show')
    .description("a job's state (queued, running, done, failed, cancelled, expired, unknown) and its stored outcome, while the in-flight store keeps it")
    .argument('<id>', 'the job id (printed by enqueue)')
    .action(act((s, id: string) => jobShowCommand(s, id)));

  program
    .command('batch')
    .description('send a JSON-RPC batch from a file (or - for stdin); prints the responses in order; exits 1 if any failed')
    .argument('<file>', 'JSON file: an array of {"method", "params"?, "id"?} (no id: a notification), or - for stdin')
    .addOption(new Option('-t, --timeout <ms>', 'deadline of each call').argParser(positiveInt))
    .option('--persistent', 'persist the messages to disk')
    .addHelpText('after', '\nExample:\n  echo \'[{"method":"sum","params":[1,2,4],"id":1},{"method":"notify_hello","params":[7]}]\' | warren batch -')
    .action(act((s, file: string, flags: { timeout?: number; persistent?: boolean }) => batchCommand(s, file, flags)));

  program
    .command('services')
    .description("live services, their instances, methods and subscriptions (the gateway's GET /services, else RabbitMQ announcements)")
    .addOption(new Option('-w, --wait <ms>', 'without a gateway, listen for announcements at least this long (the announce-now round takes about 0.5 s)').argParser(nonNegativeInt).default(cliDefaults.servicesWaitMs))
    .action(act((s, flags: { wait: number }) => servicesCommand(s, flags)));

  program
    .command('inflight')
    .description('calls in flight across the cluster (from the in-flight store in Redis)')
    .option('-w, --watch', 'refresh until Ctrl-C')
    .addOption(new Option('-i, --interval <ms>', 'refresh period with --watch').argParser(positiveInt).default(1000))
    .addOption(new Option('-c, --count <n>', 'with --watch, stop after this many refreshes').argParser(positiveInt))
    .option('-s, --service <name>', 'only calls of this service')
    .action(act((s, flags: { watch?: boolean; interval: number; count?: number; service?: string }) => inflightCommand(s, flags, stop)));

  program
    .command('status')
    .description("one call's state (queued, running, done, failed, cancelled, expired, unknown) and its stored outcome")
    .argument('<call-id>', 'the call id (shown by inflight, or call --show-id)')
    .action(act((s, callId: string) => statusCommand(s, callId)));

  program
    .command('cancel')
    .description('cancel a running or queued call; its caller gets -32003 Cancelled')
    .argument('<call-id>', 'the call id (shown by inflight, or call --show-id)')
    .action(act((s, callId: string) => cancelCommand(s, callId)));

  addOperatorCommands(program, act);

  program
    .command('permissions')
    .description("print the rabbitmqctl set_permissions line for one RabbitMQ user per process (docs/security.md); changes nothing")
    .argument('<user>', 'the RabbitMQ user (also the start of its reply queues: AMQP_USER_ID / clientIdPrefix)')
    .option('--vhost <vhost>', 'virtual host', '/')
    .option('-s, --service <name>', 'the user runs this service: its own queues, replies')
    .option('--discovery', 'the user listens to announcements (the broker, warren services)')
    .option('--dead-letters', "the user lists, replays and purges every service's dead letters (the broker)")
    .option('--delayed', 'the user sends delayed calls (--at/--in, X-Delay-Ms): the delay chain (the broker)')
    .option('--prefix <prefix>', 'start of its reply queue names, if not the user name')
    .addHelpText('after', '\nExamples:\n  warren permissions calculator --service calculator\n  warren permissions warren-broker --service warren-broker --discovery --dead-letters --delayed\n  warren permissions web')
    .action(act((s, user: string, flags: { vhost: string; service?: string; discovery?: boolean; deadLetters?: boolean; delayed?: boolean; prefix?: string }) => permissionsCommand(s, user, flags)));

  const namespace = program.command('namespace').description("manage namespaces: remove one's queues, exchanges and Redis keys");
  namespace
    .command('rm')
    .description("remove a namespace's queues, exchanges and Redis keys (lists them, then asks you to type its name)")
    .argument('<name>', 'the namespace, e.g. trial')
    .option('-y, --yes', 'remove without asking')
    .option('--force', 'remove even while its queues have consumers (services still running)')
    .option('--redis-prefix <prefix>', "the Redis key prefix of its services (default: the namespace's name)")
    .addHelpText('after', '\nExamples:\n  warren namespace rm trial\n  warren namespace rm trial --yes --redis-prefix trial-keys')
    .action(act((s, name: string, flags: NamespaceRmFlags) => namespaceRmCommand(s, name, flags)));

  program
    .command('gen')
    .description('write typed clients (TypeScript, Python) from rpc.discover of the live system or a saved OpenRPC document')
    .option('--from <file>', 'a saved OpenRPC document, or - for stdin (default: rpc.discover of the live system)')
    .option('--ts <file>', 'write the TypeScript client here')
    .option('--python <file>', 'write the Python client (pika) here')
    .option('--openrpc <file>', 'also write the document used (without servers and instance counts)')
    .option('--check', 'write nothing: exit 1 when a file differs from what would be written (for CI)')
    .option('--service <name>', "only this service's methods and notifications (repeatable)", (name: string, names: string[] = []) => [...names, name])
    .option('--operator-methods', "also the broker's operator methods (workers.*, dlq.*, schedule.*, inflight.*...), left out by default")
    .addOption(new Option('-t, --timeout <ms>', 'deadline of the rpc.discover call').argParser(positiveInt))
    .addHelpText('after', '\nExamples:\n  warren gen --ts src/warren-api.ts --python warren_api.py\n  warren gen --service billing --service shipping --ts src/warren-api.ts\n  warren gen --from api.openrpc.json --ts src/warren-api.ts --check')
    .action(act((s, flags: GenFlags) => genCommand(s, flags)));

  program
    .command('repl')
    .description('an interactive shell: call, notify, batch, inflight, cancel, dlq, with Tab completion of methods and param names from discovery, and a history (docs/cli.md)')
    .action(act((s) => replCommand(s, { stop })));

  program
    .command('new')
    .description('scaffold a new package')
    .command('service')
    .description('scaffold services/<name> in the Warren workspace or npm project (depending on @warren/amqp) around: service.ts with one method, main.ts, a test over the in-memory broker, README; listed in warren.config.json')
    .argument('<name>', 'lower-case letters, digits and hyphens, e.g. billing')
    .option('--root <dir>', 'the Warren workspace or npm project (default: the one around the current directory)')
    .option('--no-config', 'do not list the service in the project\'s warren.config.json')
    .action(act((s, name: string, flags: { root?: string; config: boolean }) => newServiceCommand(s, name, { ...flags, cwd: io.cwd ?? '.' })));

  program
    .command('start')
    .description("run the services warren.config.json lists (one process per instance, one SIGTERM each on Ctrl-C); Warren's own repository has npm start")
    .option('--root <dir>', 'the project (default: the one around the current directory)')
    .action(act((s, flags: { root?: string }) => startCommand(s, { ...flags, cwd: io.cwd ?? '.' }, stop)));

  program
    .command('bench')
    .description('load-test a method: a progress bar, then calls/s and latency percentiles')
    .addOption(new Option('-c, --concurrency <n>', 'calls in flight at once').argParser(positiveInt).default(16))
    .addOption(new Option('-N, --calls <n>', 'calls in all').argParser(positiveInt).default(1000))
    .option('-m, --method <method>', 'method to call', 'add')
    .option('-p, --params <json>', 'params of every call (default [1,2] for add, none otherwise)')
    .addOption(new Option('-t, --timeout <ms>', 'deadline of each call').argParser(positiveInt))
    .option('--progress', 'draw the progress bar even when stderr is not a terminal')
    .option('--no-progress', 'never draw the progress bar')
    .action(act((s, flags: { concurrency: number; calls: number; method: string; params?: string; timeout?: number; progress?: boolean }) => benchCommand(s, flags)));

  return program;
}

/**
 * Runs the CLI on `argv` (without node and script) and resolves with the exit
 * code; never calls `process.exit`. `stop` ends a `--watch`.
 *
 * @example await run(['call', 'add', '4', '5'], io) // prints 9, resolves 0
 */
export async function run(argv: readonly string[], io: Io, stop: AbortSignal = new AbortController().signal): Promise<ExitCodeValue> {
  let code: ExitCodeValue = ExitCode.ok;
  const program = buildProgram(io, (c) => (code = c), stop);
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version "errors" are successes; the message of a real one is already on stderr.
      return err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help' ? ExitCode.ok : ExitCode.usage;
    }
    throw err;
  }
  return code;
}

/** The bin's entry point: real stdio and environment, Ctrl-C ends a watch, exit code set on the process. */
export async function main(argv: readonly string[]): Promise<void> {
  const stop = new AbortController();
  let interrupted = false;
  const onSignal = (): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const code = await run(argv, { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd() }, stop.signal);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  process.exitCode = code;
  // Everything is closed by now; should a stray handle remain, do not hang the shell on it.
  setTimeout(() => process.exit(code), 1000).unref();
}
