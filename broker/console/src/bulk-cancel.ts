// Cancelling many calls at once: the ids the operator confirmed, and only those, as JSON-RPC
// batches of `inflight.cancel` through POST /rpc. Each entry goes through the gateway's one
// authorization rule on its own (broker/src/authz.ts): an operator token may cancel any call, a
// client token only its own, so a bulk cancel can do nothing a single one could not.
import { rpcBatch } from './api';

/** Entries per POST: well under the gateway's batch limit (1,000 by default). */
const perBatch = 200;

/** How a bulk cancel went, per call id. */
export interface BulkCancelReport {
  /** Cancels the broker accepted, by its answer's `outcome` (`cancelled`, `already-cancelled`, …). */
  readonly outcomes: Readonly<Record<string, number>>;
  /** Ids whose cancel was refused or failed, with the error's message. */
  readonly failed: readonly { readonly callId: string; readonly message: string }[];
}

/** Sends `inflight.cancel` for each id, `perBatch` at a time, and tells how each went. */
export async function cancelCalls(callIds: readonly string[]): Promise<BulkCancelReport> {
  const outcomes: Record<string, number> = {};
  const failed: { callId: string; message: string }[] = [];
  for (let i = 0; i < callIds.length; i += perBatch) {
    const chunk = callIds.slice(i, i + perBatch);
    const answers = await rpcBatch(chunk.map((callId) => ({ method: 'inflight.cancel', params: { callId } })));
    answers.forEach((a, j) => {
      const callId = chunk[j] as string;
      if (!a.ok) {
        failed.push({ callId, message: a.error.message });
        return;
      }
      const outcome = (a.result as { outcome?: string } | null)?.outcome ?? 'sent';
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    });
  }
  return { outcomes, failed };
}

/** One line for the report: `12 cancelled, 1 already-cancelled; 2 failed (not_your_call)`. */
export function describeReport(report: BulkCancelReport): string {
  const done = Object.entries(report.outcomes).map(([k, n]) => `${n} ${k}`).join(', ');
  const reasons = [...new Set(report.failed.map((f) => f.message))].join('; ');
  const failed = report.failed.length > 0 ? `${report.failed.length} failed (${reasons})` : '';
  return [done, failed].filter((s) => s !== '').join('; ') || 'nothing to cancel';
}
