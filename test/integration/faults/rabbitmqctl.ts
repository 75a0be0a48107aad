// rabbitmqctl from the tests: close a connection from the broker's side (found
// by its client-provided connection name), and stop/start the broker app. The
// command is RABBITMQCTL (e.g. "docker exec rabbit rabbitmqctl"), default
// `rabbitmqctl` on the PATH.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

function command(): [string, string[]] {
  const [file = 'rabbitmqctl', ...pre] = (process.env['RABBITMQCTL'] || 'rabbitmqctl').split(/\s+/).filter(Boolean);
  return [file, pre];
}

/** Runs rabbitmqctl; resolves with its stdout, rejects with its stderr. */
export function rabbitmqctl(args: readonly string[], timeoutMs = 60_000): Promise<string> {
  const [file, pre] = command();
  return new Promise((resolve, reject) => {
    execFile(file, [...pre, ...args], { timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err) reject(new Error(`rabbitmqctl ${args.join(' ')} failed: ${stderr || err.message}`, { cause: err }));
      else resolve(stdout);
    });
  });
}

/** Whether the rabbitmqctl command can be run here (it is on the PATH, or RABBITMQCTL names another). */
export function hasRabbitmqctl(): boolean {
  const [file] = command();
  if (file.includes('/')) return true;
  return (process.env['PATH'] ?? '').split(path.delimiter).some((dir) => {
    try {
      accessSync(path.join(dir, file), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Erlang pids of the connections whose client-provided `connection_name` is one of `names`. */
export async function connectionPids(...names: readonly string[]): Promise<string[]> {
  const out = await rabbitmqctl(['list_connections', '-q', 'pid', 'client_properties']);
  const needles = names.map((name) => `{"connection_name","${name}"}`);
  return out.split('\n').filter((line) => needles.some((n) => line.includes(n))).map((line) => line.split('\t')[0] ?? '').filter((pid) => pid.startsWith('<'));
}

/** Closes, from the broker's side (connection.close 320 CONNECTION_FORCED), every connection with one of `names`; returns how many. */
export async function closeConnectionsNamed(...names: readonly string[]): Promise<number> {
  const pids = await connectionPids(...names);
  await Promise.all(pids.map((pid) => rabbitmqctl(['close_connection', pid, 'warren fault test'])));
  return pids.length;
}
