import { useMemo, useState } from 'preact/hooks';
import { rpc, type RpcAnswer } from '../api';
import { duration, json } from '../format';
import { useDiscover } from '../hooks';
import type { Live } from '../live';
import { formFor, paramsFrom, paramsProblems, type Field, type ParamsProblems, type Schema } from '../schema';
import type { DiscoverMethod } from '../types';
import { Badge, Empty, Header, Notice } from './common';

/** Methods of the broker itself that change state: listed, but not picked first. */
const hidden = new Set(['rpc.discover']);

export function ConsoleView(props: { live: Live }) {
  const discover = useDiscover(props.live.catalogueVersion);
  const methods = discover.state === 'ok' ? [...discover.value.methods].filter((m) => !hidden.has(m.name)).sort((a, b) => (a['x-warren-service'] ?? '').localeCompare(b['x-warren-service'] ?? '') || a.name.localeCompare(b.name)) : [];
  const [name, setName] = useState('');
  const method = methods.find((m) => m.name === name) ?? methods[0];
  if (discover.state === 'loading') return <><Header title="Console" /><Empty>Loading methods…</Empty></>;
  if (discover.state === 'error') return <><Header title="Console" /><Notice kind="error">rpc.discover failed: {discover.error}</Notice></>;
  const services = [...new Set(methods.map((m) => m['x-warren-service'] ?? ''))];
  return (
    <>
      <Header title="Console" sub="Call any method the live services announce, with params checked by its schema." />
      <div class="console-grid">
        <section class="card">
          <label class="block" for="method">Method</label>
          <select id="method" value={method?.name ?? ''} onChange={(e) => setName((e.target as HTMLSelectElement).value)}>
            {services.map((s) => (
              <optgroup key={s} label={s}>
                {methods.filter((m) => (m['x-warren-service'] ?? '') === s).map((m) => <option key={m.name} value={m.name}>{m.name}</option>)}
              </optgroup>
            ))}
          </select>
          {method ? <CallForm key={method.name} method={method} /> : <Empty>No methods announced.</Empty>}
        </section>
      </div>
    </>
  );
}

function CallForm(props: { method: DiscoverMethod }) {
  const schema = props.method['x-warren-params-schema'] as Schema | undefined;
  const model = useMemo(() => formFor(schema), [schema]);
  const [values, setValues] = useState<Record<string, string>>({});
  const [raw, setRaw] = useState(model.shape === 'json' ? model.example : '');
  const [asJson, setAsJson] = useState(model.shape === 'json');
  const [timeoutMs, setTimeoutMs] = useState('30000');
  const [problem, setProblem] = useState<string | undefined>();
  const [sending, setSending] = useState(false);
  const [answer, setAnswer] = useState<(RpcAnswer & { params: unknown }) | undefined>();

  // Switching to the JSON editor starts from what the form holds. Done in the change itself, not in an
  // effect: an effect runs after paint, and could overwrite what was typed into the editor by then.
  const switchToJson = (checked: boolean): void => {
    if (checked && model.shape !== 'json' && raw === '') {
      const p = paramsFrom(model, values);
      if (p.ok && p.params !== undefined) setRaw(json(p.params));
    }
    setAsJson(checked);
  };

  // A -32602 is shown on the fields it is about, not as a raw dump (in the JSON editor, listed by field name).
  const problems: ParamsProblems | undefined = answer && !answer.ok && answer.error.code === -32602 ? paramsProblems(model, answer.error.data) : undefined;

  const send = async (): Promise<void> => {
    const p = asJson ? paramsFrom({ shape: 'json', example: '' }, {}, raw) : paramsFrom(model, values);
    if (!p.ok) {
      setProblem(p.message);
      return;
    }
    setProblem(undefined);
    // The previous answer goes at once: what shows next is this call's, never the last one's under it.
    setAnswer(undefined);
    setSending(true);
    try {
      const t = Number(timeoutMs);
      const a = await rpc(props.method.name, p.params, Number.isInteger(t) && t > 0 ? t : undefined);
      setAnswer({ ...a, params: p.params });
    } catch (err) {
      setProblem(`not sent: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setSending(false);
    }
  };

  return (
    <form
      class="call-form"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
      onKeyDown={(e) => {
        if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
          e.preventDefault();
          // As the Send button: the browser checks the fields' required/min/max first, and submits only if they hold.
          (e.currentTarget as HTMLFormElement).requestSubmit();
        }
      }}
    >
      {props.method.description ? <p class="desc">{props.method.description}</p> : null}
      {model.shape !== 'json' && model.shape !== 'none' ? (
        <label class="check">
          <input type="checkbox" checked={asJson} onChange={(e) => switchToJson((e.target as HTMLInputElement).checked)} /> Edit params as JSON
        </label>
      ) : null}
      {asJson ? (
        <>
          <label class="block" for="params-json">Params (JSON)</label>
          <textarea id="params-json" class="mono" rows={6} value={raw} onInput={(e) => setRaw((e.target as HTMLTextAreaElement).value)} spellcheck={false} />
        </>
      ) : model.shape === 'none' ? (
        <p class="muted">This method takes no params.</p>
      ) : model.shape === 'json' ? null : (
        <fieldset>
          <legend>Params {model.shape === 'by-position' ? '(by position)' : ''}</legend>
          {model.fields.map((f) => <FieldInput key={f.name} field={f} value={values[f.name] ?? f.initial} problem={problems?.fields[f.name]} onInput={(v) => setValues((x) => ({ ...x, [f.name]: v }))} />)}
        </fieldset>
      )}
      <div class="send-row">
        <label class="inline">
          <span>Timeout (ms)</span>
          <input type="number" min={1} value={timeoutMs} onInput={(e) => setTimeoutMs((e.target as HTMLInputElement).value)} class="narrow" />
        </label>
        <button type="submit" class="primary" disabled={sending} aria-keyshortcuts="Control+Enter">{sending ? 'Sending…' : 'Send'} <kbd>Ctrl+Enter</kbd></button>
      </div>
      {problem ? <Notice kind="error">{problem}</Notice> : null}
      {answer ? (
        <section class="answer" aria-label="Answer" aria-live="polite">
          <div class="answer-head">
            {answer.ok ? <Badge kind="done">result</Badge> : <Badge kind="failed">error {answer.error.code}</Badge>}
            <span class="timing" data-timing>{duration(answer.ms)}</span>
          </div>
          {problems ? (
            <div class="notice error" role="alert" data-params-problems>
              <strong>{answer.ok ? '' : answer.error.message}</strong>
              <ul>{[...(asJson ? Object.values(problems.fields) : []), ...problems.other].map((t) => <li key={t}>{t}</li>)}</ul>
              {!asJson && Object.keys(problems.fields).length > 0 ? <span>See the fields marked above.</span> : null}
            </div>
          ) : (
            <pre class="code-block" data-answer>{answer.ok ? json(answer.result) : json(answer.error)}</pre>
          )}
        </section>
      ) : null}
    </form>
  );
}

function FieldInput(props: { field: Field; value: string; problem?: string | undefined; onInput: (v: string) => void }) {
  const f = props.field;
  const id = `field-${f.name}`;
  const invalid = props.problem === undefined ? {} : { 'aria-invalid': true, 'aria-describedby': `${id}-problem` };
  const label = (
    <label for={id} class="block">
      {f.name}
      {f.required ? <span class="req" aria-label="required"> *</span> : null}
      <span class="muted kind"> {f.kind === 'json' ? 'JSON' : f.kind}</span>
    </label>
  );
  const help = (
    <>
      {f.description ? <p class="help">{f.description}</p> : null}
      {props.problem !== undefined ? <p class="help field-problem" id={`${id}-problem`} data-field-problem={f.name}>{props.problem}</p> : null}
    </>
  );
  const onInput = (e: Event): void => props.onInput((e.target as HTMLInputElement).value);
  switch (f.kind) {
    case 'boolean':
      return (
        <div class="field">
          <label class="check">
            <input id={id} type="checkbox" checked={props.value === 'true'} onChange={(e) => props.onInput(String((e.target as HTMLInputElement).checked))} /> {f.name}
          </label>
          {help}
        </div>
      );
    case 'enum':
      return (
        <div class="field">
          {label}
          <select id={id} {...invalid} value={props.value} onChange={onInput}>
            <option value="">–</option>
            {(f.options ?? []).map((o) => <option key={JSON.stringify(o)} value={JSON.stringify(o)}>{JSON.stringify(o)}</option>)}
          </select>
          {help}
        </div>
      );
    case 'integer':
    case 'number':
      return (
        <div class="field">
          {label}
          <input id={id} {...invalid} type="number" step={f.kind === 'integer' ? 1 : 'any'} {...(f.minimum === undefined ? {} : { min: f.minimum })} {...(f.maximum === undefined ? {} : { max: f.maximum })} required={f.required} value={props.value} onInput={onInput} />
          {help}
        </div>
      );
    default:
      return (
        <div class="field">
          {label}
          <input id={id} {...invalid} type="text" class={f.kind === 'json' ? 'mono' : ''} required={f.required} value={props.value} onInput={onInput} spellcheck={false} />
          {help}
        </div>
      );
  }
}
