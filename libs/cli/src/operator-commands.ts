// The operator commands: dead letters, worker controls and schedules, each served by the broker's
// operator methods (dlq.*, workers.*, schedule.*); split from program.ts, which wires them in.
import { Option, type Command } from 'commander';
import type { WorkerAction } from '@warren/amqp';
import { dlqListCommand, dlqPurgeCommand, dlqReplayCommand, dlqShowCommand } from './commands/dlq';
import { scheduleAddCommand, scheduleChangeCommand, scheduleListCommand, type AddFlags } from './commands/schedule';
import { workerCommand } from './commands/workers';
import { nonNegativeInt, positiveInt, type Act } from './program-args';

/** Adds `dlq`, `worker` and `schedule` with their subcommands to `program`. */
export function addOperatorCommands(program: Command, act: Act): void {
  const dlq = program.command('dlq').description("dead-lettered requests (served by the broker's dlq.* methods)");
  dlq
    .command('ls')
    .description('dead letters, newest first: why, attempts, method, params size')
    .option('-s, --service <name>', 'only this service (default: every live service)')
    .addOption(new Option('--offset <n>', 'skip this many').argParser(nonNegativeInt))
    .addOption(new Option('--limit <n>', 'show at most this many (default 50)').argParser(positiveInt))
    .action(act((s, flags: { service?: string; offset?: number; limit?: number }) => dlqListCommand(s, flags)));
  dlq
    .command('show')
    .description('one dead letter with its request body')
    .argument('<service>', 'service whose dead-letter queue holds it')
    .argument('<id>', 'the id dlq ls shows')
    .action(act((s, service: string, id: string) => dlqShowCommand(s, service, id)));
  dlq
    .command('replay')
    .description('send dead letters back to the service queue as new calls (new call id and deadline)')
    .argument('<service>', 'service whose dead-letter queue holds them')
    .argument('[id]', 'the id dlq ls shows (or --all)')
    .option('--all', 'replay every dead letter of the service')
    .addOption(new Option('-t, --timeout <ms>', 'deadline of each replayed call (default 60000)').argParser(positiveInt))
    .action(act((s, service: string, id: string | undefined, flags: { all?: boolean; timeout?: number }) => dlqReplayCommand(s, service, id, flags)));
  dlq
    .command('purge')
    .description("empty a service's dead-letter queue")
    .argument('<service>', 'service whose dead-letter queue to empty')
    .action(act((s, service: string) => dlqPurgeCommand(s, service)));

  const worker = program.command('worker').description("operator controls of one worker instance (served by the broker's workers.* methods; the instance id is in `warren services`)");
  const workerControls: readonly [WorkerAction, string][] = [
    ['pause', 'stop consuming: its calls wait in the queue (or go to other instances) until resume; a restart forgets it'],
    ['resume', 'consume again after a pause'],
    ['drain', 'take no new call, finish the running ones, then withdraw and stop'],
    ['cancel-all', 'cancel every call running on it; each caller gets -32003 Cancelled'],
  ];
  for (const [action, description] of workerControls) {
    worker
      .command(action)
      .description(description)
      .argument('<instance>', 'the instance id')
      .option('-s, --service <name>', 'its service, when two services have an instance of that id')
      .action(act((s, instanceId: string, flags: { service?: string }) => workerCommand(s, action, instanceId, flags)));
  }

  const schedule = program.command('schedule').description("periodic calls (served by the broker's schedule.* methods; docs/scheduling.md)");
  schedule.command('ls').description('schedules: when, policies, last run and its outcome, next run').action(act((s) => scheduleListCommand(s)));
  schedule
    .command('add')
    .description('add a schedule of a method, with a cron expression or an interval')
    .argument('<name>', 'unique name of the schedule')
    .argument('<method>', 'the method each firing calls')
    .argument('[params...]', 'params of every call, as for warren call')
    .option('--cron <expr>', "cron expression (5 fields, or 6 with seconds), e.g. '0 2 * * *'")
    .option('--tz <zone>', 'IANA time zone of --cron (default UTC)')
    .addOption(new Option('--every <ms>', 'fire every this many milliseconds (at least 1000) instead of --cron').argParser(positiveInt))
    .addOption(new Option('--overlap <policy>', 'while a firing still runs (default skip)').choices(['skip', 'queue', 'allow']))
    .addOption(new Option('--catch-up <policy>', 'occurrences missed while no scheduler ran (default none)').choices(['none', 'last', 'all']))
    .addOption(new Option('--catch-up-max <n>', "with --catch-up all: at most this many (default 10)").argParser(positiveInt))
    .addOption(new Option('-t, --timeout <ms>', 'deadline of each call (default 60000)').argParser(positiveInt))
    .option('--paused', 'add it paused')
    .option('--replace', 'replace a schedule of that name')
    .option('--allow-unserved', 'accept a method no running service serves yet (the broker refuses it otherwise, and params its schema refuses)')
    .addHelpText('after', "\nExamples:\n  warren schedule add nightly reports.build '{\"full\":true}' --cron '0 2 * * *' --tz Europe/Berlin\n  warren schedule add heartbeat add 1 2 --every 60000 --overlap allow")
    .action(act((s, name: string, method: string, params: string[], flags: AddFlags) => scheduleAddCommand(s, name, method, params, flags)));
  for (const [verb, method, about] of [
    ['rm', 'schedule.remove', 'remove a schedule'],
    ['pause', 'schedule.pause', 'pause a schedule (no occurrence fires)'],
    ['resume', 'schedule.resume', 'resume a paused schedule from now (nothing of the pause is caught up)'],
    ['run-now', 'schedule.runNow', "fire a schedule's call now"],
  ] as const) {
    schedule.command(verb).description(about).argument('<name>', 'the schedule').action(act((s, name: string) => scheduleChangeCommand(s, method, name)));
  }
}
