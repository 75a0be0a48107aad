import type { CallInfo } from '@warren/calls';
import type { Logger } from '@warren/logger';
import type { CancelListener, SendListener } from './call-options';

/** Who an RpcClient tells of the requests it sends and of the calls its callers abort. */
export class CallListeners {
  private readonly cancels: CancelListener[] = [];
  private readonly sends: SendListener[] = [];

  constructor(private readonly log: Logger) {}

  onCancel(listener: CancelListener): void {
    this.cancels.push(listener);
  }

  onSend(listener: SendListener): void {
    this.sends.push(listener);
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

  cancelled(callId: string): void {
    for (const listener of this.cancels) listener(callId);
  }
}
