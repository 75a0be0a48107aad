// The short version of `npm run soak` that CI runs (`npm run test:soak`, a
// stage of its own after `npm test`): 20 s of calls from 16
// loops to three tracked worker processes, with every kind of fault taking
// turns every 2-4 s (client connections cut, a worker's connections cut or
// stalled, a worker SIGKILLed and replaced). No call may run twice (other
// than a run cut short by a kill, taken over) and none may be lost; errors
// are only the documented ones for these faults.
import { ErrorCode } from '@warren/jsonrpc';
import { amqpUrl, redisUrl } from '@warren/testkit';
import { runSoak, type SoakReport } from '../../scripts/soak-run';

it('a 20-second soak with cuts, stalls and kills: no duplicates, nothing lost, only documented errors', async () => {
  const reports: SoakReport[] = [];
  const summary = await runSoak({
    durationMs: 20_000,
    concurrency: 16,
    workers: 3,
    faultEveryMs: [2000, 4000],
    reportEveryMs: 10_000,
    amqpUrl: amqpUrl(),
    redisUrl: redisUrl(),
    onReport: (r) => reports.push(r),
  });
  const { total } = summary;
  expect({ duplicates: total.duplicates, lost: total.lost }).toEqual({ duplicates: 0, lost: 0 });
  expect(total.calls).toBeGreaterThan(1000);
  // -32007: published but unconfirmed when the client's connection went; -32001: a call whose worker died
  // with it and whose takeover did not finish in time; -32005: every attempt's worker died.
  const documented = [ErrorCode.ConnectionLost, ErrorCode.DeadlineExceeded, ErrorCode.WorkerLost].map(String);
  expect(Object.keys(total.errors).filter((code) => !documented.includes(code))).toEqual([]);
  expect(Object.keys(total.faults).length).toBeGreaterThanOrEqual(3);
  expect(summary.pass).toBe(true);
  expect(reports.length).toBeGreaterThanOrEqual(2);
}, 90_000);
