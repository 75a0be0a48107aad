import { useEffect, useRef, useState } from 'preact/hooks';
import type { AuthProblem } from '../api';

/** Why the prompt shows, in words: first visit, a token the broker refused, or a client token where an operator's is needed. */
function Why(props: { problem: AuthProblem }) {
  switch (props.problem) {
    case 'missing':
      return null;
    case 'invalid':
      return (
        <p class="notice error" role="alert" data-token-problem="invalid">
          The broker did not accept that token: it is not one of its <code>GATEWAY_TOKENS</code> nor of its <code>GATEWAY_OPERATOR_TOKENS</code>. Check it for a typo or a missing character.
        </p>
      );
    case 'not-operator':
      return (
        <p class="notice error" role="alert" data-token-problem="not-operator">
          That token is valid, but it is a client token (<code>GATEWAY_TOKENS</code>): it may call methods and follow its own calls, not watch the whole cluster. The console needs an operator token, one of <code>GATEWAY_OPERATOR_TOKENS</code>.
        </p>
      );
  }
}

/** The token prompt: what kind of token the console needs, and why the last one did not do. */
export function TokenForm(props: { problem: AuthProblem; onDone: (token: string) => void }) {
  const [value, setValue] = useState('');
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  return (
    <form
      class="token"
      onSubmit={(e) => {
        e.preventDefault();
        props.onDone(value.trim());
      }}
    >
      <h1>Warren console</h1>
      <Why problem={props.problem} />
      <p>
        This broker asks for a bearer token, and the console needs an <strong>operator token</strong> (one of <code>GATEWAY_OPERATOR_TOKENS</code>):
        it shows every call of the cluster. A client token (<code>GATEWAY_TOKENS</code>) is for callers, which see only their own calls.
      </p>
      <p class="help">The token is kept for this tab only. A broker started with <code>GATEWAY_AUTH=none</code> asks for none.</p>
      <label for="token">Token</label>
      <input id="token" ref={input} type="password" autoComplete="off" value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} required />
      <button type="submit" class="primary">Open the console</button>
    </form>
  );
}
