// `npm start`'s choice between processes on RabbitMQ/Redis and embedded mode.
import { ServicesUnavailableError, type Provided } from '../../scripts/ensure-services';
import { chooseStartMode } from '../../scripts/start-mode';

const found: Provided = { rabbitmq: 'local', redis: 'local' };
const ok = (): Promise<Provided> => Promise.resolve(found);
const none = (): Promise<Provided> => Promise.reject(new ServicesUnavailableError('nothing answers and no Docker'));

describe('chooseStartMode', () => {
  it('runs processes when RabbitMQ and Redis are found', async () => {
    await expect(chooseStartMode({}, ok)).resolves.toEqual({ kind: 'processes', provided: found });
  });

  it('runs embedded when nothing is found and neither URL is set', async () => {
    await expect(chooseStartMode({}, none)).resolves.toMatchObject({ kind: 'embedded', why: expect.stringContaining('no Docker engine') });
  });

  it('never replaces a URL that is set with memory', async () => {
    await expect(chooseStartMode({ AMQP_URL: 'amqp://elsewhere' }, none)).rejects.toBeInstanceOf(ServicesUnavailableError);
    await expect(chooseStartMode({ REDIS_URL: 'redis://elsewhere' }, none)).rejects.toBeInstanceOf(ServicesUnavailableError);
  });

  it('WARREN_EMBEDDED=1 forces embedded without looking; =0 forbids it', async () => {
    const ensure = jest.fn(ok);
    await expect(chooseStartMode({ WARREN_EMBEDDED: '1' }, ensure)).resolves.toEqual({ kind: 'embedded', why: 'WARREN_EMBEDDED=1' });
    expect(ensure).not.toHaveBeenCalled();
    await expect(chooseStartMode({ WARREN_EMBEDDED: '0' }, none)).rejects.toBeInstanceOf(ServicesUnavailableError);
  });

  it('refuses a WARREN_EMBEDDED it cannot read', async () => {
    await expect(chooseStartMode({ WARREN_EMBEDDED: 'yes please' }, ok)).rejects.toThrow(/WARREN_EMBEDDED must be 1 or 0/);
  });

  it('lets other failures through (a bug is not a reason to run in memory)', async () => {
    await expect(chooseStartMode({}, () => Promise.reject(new TypeError('boom')))).rejects.toThrow('boom');
  });
});
