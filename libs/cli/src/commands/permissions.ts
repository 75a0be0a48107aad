import { names, permissionsFor, setPermissionsLine } from '@warren/amqp';
import { ExitCode, type ExitCodeValue } from '../errors';
import type { Session } from '../session';

export interface PermissionsFlags {
  readonly vhost: string;
  readonly service?: string;
  readonly discovery?: boolean;
  readonly deadLetters?: boolean;
  readonly delayed?: boolean;
  readonly prefix?: string;
}

/**
 * `warren permissions <user>`: the `rabbitmqctl set_permissions` line giving
 * `user` what its role needs on this namespace and nothing more
 * (docs/security.md). Prints; changes nothing and connects to nothing.
 */
export function permissionsCommand(s: Session, user: string, flags: PermissionsFlags): Promise<ExitCodeValue> {
  const p = permissionsFor(names(s.settings.namespace), {
    clientIdPrefix: flags.prefix ?? user,
    ...(flags.service === undefined ? {} : { service: flags.service }),
    ...(flags.discovery === true ? { discovery: true } : {}),
    ...(flags.deadLetters === true ? { deadLetters: true } : {}),
    ...(flags.delayed === true ? { delayed: true } : {}),
  });
  s.out(s.settings.json ? JSON.stringify({ vhost: flags.vhost, user, ...p }) : setPermissionsLine(flags.vhost, user, p));
  return Promise.resolve(ExitCode.ok);
}
