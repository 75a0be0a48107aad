import type { LocalError } from '@warren/jsonrpc';

/**
 * What the client's availability hook is told: nothing (go ahead), an error (the call rejects with it), or
 * either later. The client only calls the hook; the gate that answers it (discovery/availability.ts) sits a
 * layer up, so the type lives here, with its caller.
 */
export type AvailabilityVerdict = undefined | LocalError | Promise<undefined | LocalError>;
