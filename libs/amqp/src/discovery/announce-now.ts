import { randomBytes } from 'node:crypto';
import Ajv, { type ValidateFunction } from 'ajv';
import type { Logger } from '@warren/logger';
import { announceNowSchema, protocolVersion } from '../wire/protocol-schemas';

/** Asks every instance to announce now (docs/schemas/announce-now.schema.json). */
export interface AnnounceNowRequest {
  readonly v: typeof protocolVersion;
  readonly type: 'announce-now';
  readonly requestId: string;
  readonly jitterMs: number;
}

/** However wide a request asks the spread to be, an instance answers within this. */
export const maxAnswerDelayMs = 1000;

/** Answers of one instance are at least this far apart: anyone can publish requests, and each costs every instance an announcement. */
export const minAnswerSpacingMs = 250;

let validator: ValidateFunction | undefined;

/** Reads an announce-now request from untrusted bytes; undefined for anything else. */
export function parseAnnounceNow(body: Buffer): AnnounceNowRequest | undefined {
  if (body.length > 4096) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  validator ??= new Ajv({ strict: true }).compile(announceNowSchema);
  if (!validator(value)) return undefined;
  const v = value as AnnounceNowRequest;
  return { v: protocolVersion, type: 'announce-now', requestId: v.requestId, jitterMs: v.jitterMs };
}

export function announceNowRequest(jitterMs: number): AnnounceNowRequest {
  return { v: protocolVersion, type: 'announce-now', requestId: randomBytes(8).toString('hex'), jitterMs };
}

/**
 * An instance's side of announce-now: answers each request once, after a
 * random delay within the requested spread, so a cluster of many instances
 * does not answer a starting registry in one burst. Requests that arrive
 * while an answer is pending share it, and answers are spaced at least
 * `minAnswerSpacingMs` apart, so a flood of requests costs at most a few
 * announcements a second.
 */
export class AnnounceOnRequest {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private lastAnswerAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly announce: () => void,
    private readonly log: Logger,
    private readonly random: () => number = Math.random,
  ) {}

  /** One delivery from the instance's control queue. */
  onMessage(body: Buffer): void {
    const request = parseAnnounceNow(body);
    if (!request) {
      this.log.debug('control message that is not an announce-now request ignored');
      return;
    }
    if (this.closed || this.timer) return;
    const jitter = Math.floor(this.random() * Math.min(request.jitterMs, maxAnswerDelayMs));
    const delay = Math.max(jitter, this.lastAnswerAt + minAnswerSpacingMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.lastAnswerAt = Date.now();
      this.announce();
    }, delay);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
