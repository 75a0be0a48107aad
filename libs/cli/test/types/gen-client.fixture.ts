// Uses of the generated client (examples/generated/warren-api.ts, `warren gen`): the right ones
// compile, and each wrong params shape or wrong use of a result is a compile error of its own
// (libs/cli/test/gen-types.test.ts compiles this file with and without the directives).
import type { RpcClient } from '@warren/amqp';
import { add, calculate, errorOf, getData, notifier, proxy, reportRenderErrors, type AddError, type Caller } from '../../../../examples/generated/warren-api';

export async function uses(client: RpcClient): Promise<void> {
  // The RpcClient of @warren/amqp is a Caller.
  const caller: Caller = client;
  const api = proxy(caller);

  // Params by position and by name, results typed.
  const sum: number = await add(caller, [1, 2]);
  const byName: number = await api.add({ a: 1, b: 2 });
  const text: string = await api.calculate({ expression: '1+2' });
  const [greeting, five]: [string, number] = await getData(caller);
  const rendered = await api.report.render({ size: 3, title: 't' });
  const pages: number = rendered.pages;
  const progress = await api.report.progress(['call-id']);
  const percent: number | undefined = progress?.percent;
  await notifier(caller).notify_sum([1, 2, 3]);
  const failed = errorOf(new Error('x'), reportRenderErrors);
  const lost: boolean = failed?.code === -32005;
  void [sum, byName, text, greeting, five, pages, percent, lost];

  // Wrong params shapes.
  // @ts-expect-error: three numbers where add takes two
  await add(caller, [1, 2, 3]);
  // @ts-expect-error: a string where add takes numbers
  await api.add(['1', 2]);
  // @ts-expect-error: by name with the wrong names
  await api.add({ x: 1, y: 2 });
  // @ts-expect-error: a property calculate does not take
  await calculate(caller, { expression: '1', extra: true });
  // @ts-expect-error: calculate needs its params
  await api.calculate();
  // @ts-expect-error: size is a number
  await api.report.render({ size: '3' });
  // @ts-expect-error: report.progress takes [callId], one string
  await api.report.progress([1]);
  // @ts-expect-error: notify_sum takes numbers
  await notifier(caller).notify_sum(['a']);
  // @ts-expect-error: no such method
  await api.multiply([1, 2]);

  // Wrong uses of results.
  // @ts-expect-error: add answers a number, not a string
  const wrongSum: string = await api.add([1, 2]);
  // @ts-expect-error: calculate answers a string
  const wrongText: number = await api.calculate({ expression: '1' });
  // @ts-expect-error: report.progress may answer null
  const unsafe: number = (await api.report.progress(['id'])).percent;
  // @ts-expect-error: report.render's result has no field `pagez`
  const typo: number = rendered.pagez;
  // @ts-expect-error: -32005 is not among add's documented errors
  const never: AddError['code'] = -32005;
  void [wrongSum, wrongText, unsafe, typo, never];
}
