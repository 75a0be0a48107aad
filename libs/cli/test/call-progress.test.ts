// The progress view of `warren call`: a cli-progress bar on a terminal (drawn from the first
// report, cleared at the answer), a line per report elsewhere; and Invalid params as lines.
import { PassThrough } from 'node:stream';
import { progressView } from '../src/call-progress';
import { schemaFailures } from '../src/commands/call';
import { Session, type Io } from '../src/session';
import { resolveSettings } from '../src/index';

/** A stderr that passes for a terminal, recording what is drawn. */
function terminal(): { stream: Io['stderr'] & Record<string, unknown>; text: () => string } {
  let text = '';
  const stream = {
    isTTY: true,
    columns: 120,
    write: (t: string) => ((text += t), true),
    cursorTo: () => true,
    clearLine: () => true,
    moveCursor: () => true,
    on: () => stream,
    removeListener: () => stream,
  };
  return { stream, text: () => text };
}

function session(stderr: Io['stderr']): Session {
  const io: Io = { stdout: { write: () => true }, stderr, stdin: new PassThrough(), env: {} };
  return new Session(io, resolveSettings(io, {}));
}

describe('progressView', () => {
  it('draws a bar with percent, message, elapsed and eta on a terminal, from the first report, and clears it at the answer', () => {
    const tty = terminal();
    const view = progressView(session(tty.stream), Date.now() - 1000);
    expect(tty.text()).toBe('');
    view.listener({ fraction: 0.5, message: 'page 5 of 10', at: Date.now() });
    expect(tty.text()).toMatch(/█+░+ 50% \| page 5 of 10 \| elapsed \S+ \| eta \S+/);
    const before = tty.text().length;
    view.done();
    // Cleared: the line is wiped rather than left behind for the answer to follow.
    expect(tty.text().slice(before)).toContain('\u001b[2K');
    expect(() => view.done()).not.toThrow();
  });

  it('writes a line per report when stderr is not a terminal', () => {
    let err = '';
    const view = progressView(session({ write: (t: string) => (err += t), isTTY: false }), Date.now());
    view.listener({ fraction: 0.25, message: 'm', at: Date.now() });
    view.listener({ fraction: 1, at: Date.now() });
    view.done();
    expect(err.trim().split('\n')).toEqual([expect.stringMatching(/^progress 25% m \(elapsed \S+, eta \S+\)$/), expect.stringMatching(/^progress 100% \(elapsed \S+, eta -\)$/)]);
  });
});

describe('schemaFailures', () => {
  it('turns ajv details into readable lines, and leaves other data alone', () => {
    expect(schemaFailures([{ path: '/size', keyword: 'maximum', message: 'must be <= 600' }, { path: '', keyword: 'required', message: "must have required property 'size'" }])).toEqual([
      'params/size: must be <= 600 (maximum)',
      "params: must have required property 'size' (required)",
    ]);
    // schedule.add's params_rejected holds them as `details`.
    expect(schemaFailures({ reason: 'params_rejected', method: 'paint', details: [{ path: '/color', keyword: 'enum', message: 'must be one of "red", "green"', allowed: ['red', 'green'] }] })).toEqual(['params/color: must be one of "red", "green" (enum)']);
    expect(schemaFailures({ reason: 'x' })).toBeUndefined();
    expect(schemaFailures([])).toBeUndefined();
    expect(schemaFailures(['x'])).toBeUndefined();
  });
});
