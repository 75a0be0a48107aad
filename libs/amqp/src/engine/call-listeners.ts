import type { CallInfo } from '@warren/calls';
import type { Logger } from '@warren/logger';
import type { Progress, ProgressListener } from '../wire/progress';
import type { CancelListener, SendListener, SettledListener } from './call-options';

const settledHow = { resolved: 'answered', rejected: 'failed', timeout: 'timeout', aborted: 'aborted' } as const;

/** Who an RpcClient tells of the requests it sends, of its calls' progress, of the calls it settles and of those its callers abort. */
export class CallListeners {
  private readonly cancels: CancelListener[] = [];
  private readonly sends: SendListener[] = [];
  private readonly settles: SettledListener[] = [];
  /** Progress listeners of pending calls, by call id; each leaves with its call. */
  private readonly progress = new Map<string, ProgressListener>();

  constructor(private readonly log: Logger) {}

  onCancel(listener: CancelListener): void {
    this.cancels.push(listener);
  }

  onSend(listener: SendListener): void {
    this.sends.push(listener);
  }

  onSettle(listener: SettledListener): void {
    this.settles.push(listener);
  }

  /** Whether anyone listens to sends: without a listener, no CallInfo is made per call. */
  get hearSends(): boolean {
    return this.sends.length > 0;
  }

  sent(call: CallInfo): void {
    for (const listener of this.sends) {
      try {
        listener(call);
      } catch (err) {
        // A listener's bug must not fail the call it was told about.
        this.log.warn({ err, callId: call.callId }, 'send listener threw');
      }
    }
  }

  settled(callId: string, outcome: keyof typeof settledHow): void {
    if (this.progress.size > 0) this.progress.delete(callId);
    if (this.settles.length === 0) return;
    for (const listener of this.settles) {
      try {
        listener(callId, settledHow[outcome]);
      } catch (err) {
        // As for sends: a listener's bug must not break the settling of the call (or of the calls after it).
        this.log.warn({ err, callId }, 'settle listener threw');
      }
    }
  }

  listenToProgress(callId: string, listener: ProgressListener): void {
    this.progress.set(callId, listener);
  }

  hearsProgress(callId: string): boolean {
    return this.progress.has(callId);
  }

  progressed(callId: string, progress: Progress): void {
    try {
      this.progress.get(callId)?.(progress);
    } catch (err) {
      // A listener's bug must not fail the call it listens to.
      this.log.warn({ err, callId }, 'progress listener threw');
    }
  }

  cancelled(callId: string): void {
    for (const listener of this.cancels) listener(callId);
  }
}
