// Windowed rows: a table of thousands of calls renders only the rows in (and near) the viewport,
// with spacer rows for the rest, so an update costs the same at 50 rows or 5,000 (In flight under
// load: issue 27). The page itself scrolls; rows have one height (measured from a rendered row).
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

/** Rows rendered beyond each edge of the viewport, so a quick scroll does not show blanks. */
const overscan = 10;

export interface RowWindow {
  /** Index of the first row rendered, and one past the last. */
  readonly start: number;
  readonly end: number;
  /** Heights of the spacers above and below the rendered rows, in px. */
  readonly above: number;
  readonly below: number;
  /** Put on the tbody: where the rows start on the page, and the height of one. */
  readonly body: { current: HTMLTableSectionElement | null };
}

/** Which of `count` rows to render now; follows the page's scroll and size. */
export function useRowWindow(count: number, defaultRowHeight = 41): RowWindow {
  const body = useRef<HTMLTableSectionElement>(null);
  const [rowHeight, setRowHeight] = useState(defaultRowHeight);
  const [first, setFirst] = useState(0);
  const [visible, setVisible] = useState(Math.ceil(window.innerHeight / defaultRowHeight));

  useEffect(() => {
    let frame = 0;
    const update = (): void => {
      frame = 0;
      const el = body.current;
      if (!el) return;
      measure(el);
      const top = el.getBoundingClientRect().top;
      setFirst(Math.max(0, Math.floor(-top / rowHeight)));
      setVisible(Math.ceil(window.innerHeight / rowHeight) + 1);
    };
    const later = (): void => {
      if (frame === 0) frame = requestAnimationFrame(update);
    };
    update();
    addEventListener('scroll', later, { passive: true });
    addEventListener('resize', later);
    return () => {
      removeEventListener('scroll', later);
      removeEventListener('resize', later);
      cancelAnimationFrame(frame);
    };
  }, [rowHeight]);

  // The real height of a row (it changes with the layout, e.g. at narrow widths): read when the
  // first rows appear, then on scroll and resize (in an animation frame, where the layout is
  // done anyway). Not after every update: reading a height there forces a layout per feed tick,
  // the largest single cost In flight had under 1,000 calls (bench/console-bench.ts).
  const measured = useRef(false);
  const measure = (el: HTMLTableSectionElement): void => {
    const row = el.querySelector<HTMLElement>('tr[data-call-id]');
    if (!row) return;
    measured.current = true;
    if (Math.abs(row.offsetHeight - rowHeight) >= 1) setRowHeight(row.offsetHeight);
  };
  useLayoutEffect(() => {
    if (!measured.current && body.current) measure(body.current);
  });

  const start = Math.min(Math.max(0, first - overscan), Math.max(0, count - 1));
  const end = Math.min(count, first + visible + overscan);
  return { start, end, above: start * rowHeight, below: Math.max(0, count - end) * rowHeight, body };
}
