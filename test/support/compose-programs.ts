// What each program of the compose files makes of its environment: the very
// env readers its main calls (broker/src/main.ts, services/*/src/main.ts), so
// a compose file the processes would refuse (a missing token, a bad number)
// fails a unit test instead of crash-looping in a container.
import { readServiceEnv } from '@warren/amqp';
import type { OpsEnv } from '../../libs/amqp/src/runtime/service-env';
import { brokerOptionsFromEnv } from '../../broker/src/env';
import { auditDefaults, auditSettings } from '../../services/audit/src/service';
import { calculatorDefaults } from '../../services/calculator/src/service';
import { jobsDefaults, jobsSettings } from '../../services/jobs/src/service';
import { composeEnv, composeProgram, type ComposeService } from './compose';

/** The settings every program has, read the way its main reads them. */
export interface ProgramSettings {
  readonly pkg: string;
  readonly amqpUrls: readonly string[];
  readonly redisUrl: string | undefined;
  /** The broker's gateway port; for a service, its ops port (undefined when off). */
  readonly healthPort: number | undefined;
  /** The service's ops port settings (services only). */
  readonly ops?: OpsEnv | undefined;
  /** The whole result of the reader, for checks of a program's own settings. */
  readonly read: object;
}

/** Runs the env reader of the program `s` runs over `s`'s environment; throws as the process would. */
export function readProgramEnv(s: ComposeService): ProgramSettings {
  const env = composeEnv(s);
  const { pkg } = composeProgram(s);
  switch (pkg) {
    case 'broker': {
      const read = brokerOptionsFromEnv(env);
      return { pkg, amqpUrls: read.urls, redisUrl: read.redisUrl, healthPort: read.port, read };
    }
    case 'services/calculator': {
      const read = readServiceEnv(env, calculatorDefaults);
      return { pkg, amqpUrls: read.amqpUrls, redisUrl: read.redisUrl, healthPort: read.ops?.port, ops: read.ops, read };
    }
    case 'services/audit': {
      const read = { ...readServiceEnv(env, auditDefaults), ...auditSettings(env) };
      return { pkg, amqpUrls: read.amqpUrls, redisUrl: read.redisUrl, healthPort: read.ops?.port, ops: read.ops, read };
    }
    case 'services/jobs': {
      const read = { ...readServiceEnv(env, jobsDefaults), ...jobsSettings(env) };
      return { pkg, amqpUrls: read.amqpUrls, redisUrl: read.redisUrl, healthPort: read.ops?.port, ops: read.ops, read };
    }
    default:
      throw new Error(`no env reader known for ${pkg}: add the one its main calls here`);
  }
}
