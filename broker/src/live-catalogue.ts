import { EventEmitter } from 'node:events';
import type { ServiceRegistry } from '@warren/amqp';
import { buildCatalogue, type Catalogue } from './catalogue';

interface LiveCatalogueEvents {
  /** The set of tools (names, descriptions or schemas) changed: MCP clients are told to list again. */
  toolsChanged: [];
}

/**
 * The catalogue of the live registry, rebuilt lazily after the registry
 * changes (it changes on every announcement, so rebuilding eagerly would do
 * work nobody reads).
 */
export class LiveCatalogue extends EventEmitter<LiveCatalogueEvents> {
  private cached: Catalogue | undefined;
  private toolsFingerprint = '';

  constructor(private readonly registry: Pick<ServiceRegistry, 'list' | 'on' | 'off'>) {
    super();
    registry.on('change', this.onChange);
  }

  current(): Catalogue {
    this.cached ??= buildCatalogue(this.registry.list());
    return this.cached;
  }

  /** Stops following the registry. */
  close(): void {
    this.registry.off('change', this.onChange);
  }

  private readonly onChange = (): void => {
    this.cached = undefined;
    // Only tools/list_changed needs an eager look, and only when someone listens for it.
    if (this.listenerCount('toolsChanged') === 0) return;
    const fingerprint = JSON.stringify([...this.current().tools.values()].sort((a, b) => a.name.localeCompare(b.name)));
    if (fingerprint === this.toolsFingerprint) return;
    this.toolsFingerprint = fingerprint;
    this.emit('toolsChanged');
  };
}
