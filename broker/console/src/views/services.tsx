import { useState } from 'preact/hooks';
import { json, relative } from '../format';
import { useDiscover, useServices } from '../hooks';
import type { Live } from '../live';
import { href, type Route } from '../route';
import type { DiscoverMethod, ServiceSummary } from '../types';
import { Badge, Empty, Filter, Header, matches, Notice } from './common';
import { QueueSource, QueueTable } from './queue-figures';

/** Every service, or one (`#/services/<name>`, a link to share). */
export function ServicesView(props: { live: Live; route: Route }) {
  const only = props.route.path[0];
  const services = useServices(props.live.catalogueVersion);
  const discover = useDiscover(props.live.catalogueVersion);
  const [filter, setFilter] = useState('');
  if (services.state === 'loading') return <><Header title="Services" /><Empty>Loading…</Empty></>;
  if (services.state === 'error') return <><Header title="Services" /><Notice kind="error">{services.error}</Notice></>;
  const schemas = new Map<string, DiscoverMethod>(discover.state === 'ok' ? discover.value.methods.map((m) => [m.name, m]) : []);
  const list = services.value.services.filter((s) => (only === undefined || s.name === only) && matches(filter, s.name, ...s.methods.map((m) => m.name)));
  const instances = list.reduce((n, s) => n + s.instances.length, 0);
  return (
    <>
      <Header title="Services" sub={<>{`${list.length} service${list.length === 1 ? '' : 's'} · ${instances} instance${instances === 1 ? '' : 's'}`} · <QueueSource source={services.value.queueSource} /></>}>
        <Filter value={filter} onInput={setFilter} label="Filter services and methods" />
      </Header>
      {discover.state === 'error' ? <Notice kind="error">Schemas unavailable: {discover.error}</Notice> : null}
      {only !== undefined ? <p class="small-text"><a href={href('services')}>All services</a></p> : null}
      {list.length === 0 ? <Empty>{only === undefined ? 'No live service has announced itself.' : `No live service named ${only}.`}</Empty> : null}
      <div class="cards">
        {list.map((s) => <ServiceCard key={s.name} service={s} schemas={schemas} now={services.at} />)}
      </div>
    </>
  );
}

function ServiceCard(props: { service: ServiceSummary; schemas: ReadonlyMap<string, DiscoverMethod>; now: number }) {
  const s = props.service;
  const degraded = s.instances.filter((i) => i.tracking?.state === 'degraded').length;
  return (
    <section class="card" aria-labelledby={`svc-${s.name}`} data-service={s.name}>
      <header class="card-head">
        <h2 id={`svc-${s.name}`}><a href={href('services', [s.name])}>{s.name}</a></h2>
        <div class="facts">
          <span class="fact"><b>{s.instances.length}</b> instance{s.instances.length === 1 ? '' : 's'}</span>
          {degraded > 0 ? <Badge kind="failed">{degraded} degraded</Badge> : null}
        </div>
      </header>
      {s.queue ? <QueueTable service={s.name} queue={s.queue} /> : null}
      <table class="grid compact" aria-label={`Instances of ${s.name}`}>
        <thead>
          <tr>
            <th scope="col">Instance</th>
            <th scope="col" class="num">Running</th>
            <th scope="col">Tracking</th>
            <th scope="col" class="num">Last seen</th>
          </tr>
        </thead>
        <tbody>
          {s.instances.map((i) => (
            <tr key={i.instanceId}>
              <td class="mono">
                <a href={href('workers', [i.instanceId])}>{i.instanceId}</a>
                {i.worker?.draining === true ? <> <Badge kind="failed">draining</Badge></> : i.worker?.paused === true ? <> <Badge kind="neutral">paused</Badge></> : null}
              </td>
              <td class="num">{i.running ?? '–'}</td>
              <td>{i.tracking ? <Badge kind={i.tracking.state === 'degraded' ? 'failed' : i.tracking.state === 'tracking' ? 'done' : 'neutral'}>{i.tracking.state}</Badge> : <span class="muted">untracked</span>}</td>
              <td class="num">{i.lastSeen ? relative(i.lastSeen - props.now) : '–'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Methods</h3>
      <ul class="methods">
        {s.methods.map((m) => {
          const schema = props.schemas.get(m.name)?.['x-warren-params-schema'];
          return (
            <li key={m.name} data-method={m.name}>
              <details>
                <summary>
                  <span class="mono strong">{m.name}</span>
                  {m.tool ? <Badge kind="neutral">tool {m.tool}</Badge> : null}
                  {m.jobStyle ? <Badge kind="neutral">job</Badge> : null}
                  {m.persistent ? <Badge kind="neutral">persistent</Badge> : null}
                  {m.description ? <span class="desc">{m.description}</span> : null}
                </summary>
                <p class="small-text"><a href={href('outcomes', [], { method: m.name })}>Outcomes of {m.name}</a></p>
                <pre class="code-block" aria-label={`Params schema of ${m.name}`}>{schema === undefined ? 'any params' : json(schema)}</pre>
              </details>
            </li>
          );
        })}
      </ul>
      {s.notifications.length > 0 ? (
        <p class="small-text">
          <span class="muted">Notifications: </span>
          {s.notifications.map((n) => <code key={n}>{n} </code>)}
        </p>
      ) : null}
    </section>
  );
}
