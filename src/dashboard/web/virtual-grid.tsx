/**
 * A grid that keeps only the rows near the viewport in the page: however many files a library
 * holds and however far it is scrolled, the DOM holds a few screens of cards. Rows have one
 * height (cards are square thumbnails with two lines under them); the column count follows the
 * grid's width, so the cards fill it from a phone to a 4K screen. `onNearEnd` asks for the next page when the last loaded row comes into view.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

/** Narrowest a card may get: two columns on a phone, more as the screen widens, bigger cards on 4K. */
function minCard(width: number): number {
  return width < 560 ? 150 : width > 2400 ? 240 : 180;
}
const GAP = 16;
const TEXT_BELOW = 64;
const OVERSCAN_ROWS = 3;

export function VirtualGrid<T>({ items, keyOf, render, onNearEnd }: { items: T[]; keyOf: (item: T) => string; render: (item: T) => ComponentChildren; onNearEnd: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ width: 1000, top: 0, height: 800 });
  useEffect(() => {
    const measure = () => {
      const el = box.current;
      if (!el) return;
      const rect = el.getBoundingClientRect();
      setView({ width: rect.width, top: -rect.top, height: innerHeight });
    };
    measure();
    addEventListener("scroll", measure, { passive: true });
    addEventListener("resize", measure);
    // The grid's own width changes without a window resize too (a sidebar filling in, a scrollbar appearing).
    const resized = new ResizeObserver(measure);
    if (box.current) resized.observe(box.current);
    return () => {
      removeEventListener("scroll", measure);
      removeEventListener("resize", measure);
      resized.disconnect();
    };
  }, []);
  const columns = Math.max(1, Math.floor((view.width + GAP) / (minCard(view.width) + GAP)));
  const cardWidth = (view.width - GAP * (columns - 1)) / columns;
  const rowHeight = cardWidth + TEXT_BELOW + GAP;
  const rows = Math.ceil(items.length / columns);
  const first = Math.max(0, Math.floor(view.top / rowHeight) - OVERSCAN_ROWS);
  const last = Math.min(rows, Math.ceil((view.top + view.height) / rowHeight) + OVERSCAN_ROWS);
  useEffect(() => {
    if (rows > 0 && last >= rows) onNearEnd();
  }, [last, rows]);
  const shown = items.slice(first * columns, last * columns);
  return (
    <div ref={box} class="virtual-grid" style={{ height: `${rows * rowHeight}px` }}>
      <ul class="grid" style={{ transform: `translateY(${first * rowHeight}px)`, gridTemplateColumns: `repeat(${columns}, minmax(0, 1fr))` }} aria-rowcount={rows}>
        {shown.map((item) => (
          <li key={keyOf(item)} style={{ height: `${rowHeight - GAP}px` }}>
            {render(item)}
          </li>
        ))}
      </ul>
    </div>
  );
}
