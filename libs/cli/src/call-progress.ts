import { SingleBar } from 'cli-progress';
import type { Progress } from '@warren/amqp';
import { duration } from './format';
import type { Session } from './session';

/** Shows a call's progress while it runs; `done()` clears it when the answer arrives. */
export interface ProgressView {
  readonly listener: (p: Progress) => void;
  done(): void;
}

/**
 * On a terminal, a cli-progress bar on stderr (percent, message, elapsed, ETA), drawn from the first
 * report on (a call that reports none shows nothing) and cleared when the answer arrives. Elsewhere
 * (`--progress` into a pipe or a log), one line per report, since a bar cannot be redrawn there.
 */
export function progressView(s: Session, startedAt = Date.now()): ProgressView {
  const tty = s.io.stderr.isTTY === true;
  let bar: SingleBar | undefined;
  const eta = (p: Progress): string => (p.fraction > 0 && p.fraction < 1 ? duration(((p.at - startedAt) * (1 - p.fraction)) / p.fraction) : '-');
  return {
    listener: (p) => {
      const payload = { note: p.message ?? '', since: duration(Math.max(0, Date.now() - startedAt)), left: eta(p) };
      if (!tty) {
        s.err(`progress ${Math.round(p.fraction * 100)}%${p.message === undefined ? '' : ` ${p.message}`} (elapsed ${payload.since}, eta ${payload.left})`);
        return;
      }
      if (!bar) {
        bar = new SingleBar({
          stream: s.io.stderr as NodeJS.WriteStream,
          format: '{bar} {percentage}% | {note} | elapsed {since} | eta {left}',
          barCompleteChar: '\u2588',
          barIncompleteChar: '\u2591',
          clearOnComplete: true,
          hideCursor: true,
          etaBuffer: 20,
        });
        // Started at the first report's value: the bar redraws on its own timer, not on every update.
        bar.start(100, Math.round(p.fraction * 100), payload);
        return;
      }
      bar.update(Math.round(p.fraction * 100), payload);
    },
    done: () => {
      bar?.stop();
      bar = undefined;
    },
  };
}
