// A scripted TrackerStore for the tracker's unit tests: records what the tracker asked for and answers
// claims from a queue (a `run` at the asked attempt when it is empty).
import type { ClaimReply, HeartbeatEntry } from '../src/record-codec';
import type { ClaimArgs, FinishArgs, TrackerStore } from '../src/store-port';

export class FakeStore implements TrackerStore {
  claimReplies: (ClaimReply | Error)[] = [];
  claims: { callId: string; args: ClaimArgs }[] = [];
  finishes: { callId: string; args: FinishArgs }[] = [];
  releases: string[] = [];
  renewals: string[] = [];
  renewReply = 0;
  beats: HeartbeatEntry[] = [];
  down = false;
  listening = true;
  /** Set: claims wait for it to answer them (in order). */
  holdClaims = false;
  held: (() => void)[] = [];
  events: string[] = [];
  onCancel: ((callId: string, markTtlMs?: number) => void) | undefined;
  maxMarks = 0;
  connection: ((up: boolean) => void) | undefined;

  private fail(): void {
    if (this.down) throw Object.assign(new Error('Connection is closed.'), { name: 'Error' });
  }

  async claim(callId: string, args: ClaimArgs): Promise<ClaimReply> {
    this.fail();
    this.claims.push({ callId, args });
    this.events.push(`claim ${callId}`);
    if (this.holdClaims) await new Promise<void>((resolve) => this.held.push(resolve));
    const next = this.claimReplies.shift() ?? { kind: 'run', attempt: args.attempt, previousOwner: undefined };
    if (next instanceof Error) throw next;
    return next;
  }
  /** Written as asked for: the claim is recorded when made. */
  claimsWritten(): undefined {
    return undefined;
  }
  async finish(callId: string, args: FinishArgs): Promise<number> {
    this.fail();
    this.finishes.push({ callId, args });
    return 1;
  }
  async release(callId: string): Promise<number> {
    this.fail();
    this.releases.push(callId);
    return 1;
  }
  async renew(callId: string): Promise<number> {
    this.fail();
    this.renewals.push(callId);
    return this.renewReply;
  }
  progresses: { callId: string; token: string; json: string }[] = [];
  async retrying(): Promise<number> {
    this.fail();
    return 1;
  }
  listed: { callId: string; deadline: number }[] = [];
  async listWaiting(_list: string, callId: string, deadline: number): Promise<void> {
    this.fail();
    this.listed.push({ callId, deadline });
  }
  async progress(callId: string, token: string, json: string, _logTtlMs: number): Promise<number> {
    this.fail();
    this.progresses.push({ callId, token, json });
    return 1;
  }
  async heartbeat(_s: string, _i: string, entry: HeartbeatEntry): Promise<void> {
    this.fail();
    this.beats.push(entry);
  }
  async goodbye(): Promise<void> {
    this.fail();
  }
  effects = new Map<string, string>();
  async effectStart(callId: string, name: string, mark: string): Promise<unknown> {
    this.fail();
    const v = this.effects.get(`${callId}/${name}`);
    if (v === undefined) this.effects.set(`${callId}/${name}`, mark);
    return v === undefined || v === mark ? 'R' : v.startsWith('D') ? v : 'P';
  }
  async effectComplete(callId: string, name: string, json: string): Promise<number> {
    this.fail();
    if (this.effects.get(`${callId}/${name}`)?.startsWith('D')) return 0;
    this.effects.set(`${callId}/${name}`, `D${json}`);
    return 1;
  }
  async effectForget(callId: string, name: string, mark: string): Promise<number> {
    this.fail();
    return this.effects.get(`${callId}/${name}`) === mark && this.effects.delete(`${callId}/${name}`) ? 1 : 0;
  }
  subscribeCancels(_instanceId: string, onCancel: (callId: string, markTtlMs?: number) => void, maxMarks: number): void {
    this.onCancel = onCancel;
    this.maxMarks = maxMarks;
  }
  onConnection(listener: (up: boolean) => void): void {
    this.connection = listener;
  }
  async ready(): Promise<boolean> {
    return !this.down;
  }
  async close(): Promise<void> {}
}
