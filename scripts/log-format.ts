// How `npm start` shows its processes' logs: each process writes pino's JSON
// lines; on a terminal they are made readable (pino-pretty, one line each),
// elsewhere (a pipe, a file, LOG_FORMAT=json) they stay JSON for tools.
import { prettyFactory } from 'pino-pretty';

export type LogFormat = 'pretty' | 'json';

/** LOG_FORMAT=json|pretty wins; unset, a terminal gets pretty and anything else JSON. */
export function logFormat(env: NodeJS.ProcessEnv, isTty: boolean): LogFormat {
  const asked = env['LOG_FORMAT']?.trim().toLowerCase();
  if (asked === 'json' || asked === 'pretty') return asked;
  if (asked) throw new RangeError(`LOG_FORMAT must be "json" or "pretty", got ${JSON.stringify(env['LOG_FORMAT'])}`);
  return isTty ? 'pretty' : 'json';
}

/**
 * A function turning one output line of a process into what is printed:
 * the process's name as a prefix, and the line pretty-printed when it is a
 * pino JSON line and the format is pretty (anything else, such as a stack
 * trace on stderr, is passed through as it is).
 */
export function lineFormatter(format: LogFormat, colorize: boolean): (name: string, line: string) => string {
  const pretty = format === 'pretty' ? prettyFactory({ colorize, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }) : undefined;
  return (name, line) => {
    const prefix = `${name.padEnd(12)} | `;
    if (!pretty || !line.startsWith('{')) return `${prefix}${line}\n`;
    try {
      JSON.parse(line);
    } catch {
      return `${prefix}${line}\n`;
    }
    return `${prefix}${pretty(line).replace(/\n+$/, '')}\n`;
  };
}
