import { parseArgs, targets } from '../../bench/rpc-bench';
import { installNeeded } from '../../bench/peer-install';
import { PEERS, peerModuleUrl } from '../../bench/peer-paths';
import { preparePeers } from '../../bench/peer-target';

describe('bench peer targets', () => {
  it('accepts every peer by name, and runs them by default', () => {
    expect(parseArgs(['--targets', 'amqp-direct,moleculer,nestjs-rmq,rabbitmq-client']).targets).toEqual(['amqp-direct', 'moleculer', 'nestjs-rmq', 'rabbitmq-client']);
    expect(parseArgs([]).targets).toEqual(expect.arrayContaining([...PEERS]));
    for (const peer of PEERS) expect(targets[peer]?.().name).toBe(peer);
  });

  it('installs when nothing was installed by the bench, or when the lockfile changed since', () => {
    expect(installNeeded({ lockHash: 'abc', stamp: undefined })).toBe(true);
    expect(installNeeded({ lockHash: 'abc', stamp: 'old\n' })).toBe(true);
    expect(installNeeded({ lockHash: 'abc', stamp: 'abc\n' })).toBe(false);
  });

  it('goes on without the peers when they cannot be installed and were not asked for by name', () => {
    const offline = (): void => {
      throw new Error('npm ci failed');
    };
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(preparePeers(['amqp-direct', 'moleculer', 'warren'], false, offline)).toEqual(['amqp-direct', 'warren']);
      expect(() => preparePeers(['amqp-direct', 'moleculer'], true, offline)).toThrow('npm ci failed');
      const ensure = jest.fn();
      expect(preparePeers(['amqp-direct', 'warren'], true, ensure)).toEqual(['amqp-direct', 'warren']);
      expect(ensure).not.toHaveBeenCalled();
    } finally {
      error.mockRestore();
    }
  });

  it('loads each peer from its compiled module in bench/peers/dist', () => {
    expect(peerModuleUrl('nestjs-rmq', 'caller')).toMatch(/^file:\/\/.*\/bench\/peers\/dist\/nestjs-caller\.js$/);
    expect(peerModuleUrl('moleculer', 'service')).toMatch(/\/bench\/peers\/dist\/moleculer-service\.js$/);
  });
});
