/**
 * A face cut out of its photo's thumbnail: the box (0-1 of the picture) with a margin, square,
 * drawn as an SVG whose viewBox is the box in the picture's pixels (so it scales with its box).
 * The picture's size is known once it has loaded; until then, or without a thumbnail, a blank
 * square with the person's initial.
 */
import { useEffect, useState } from "preact/hooks";

export type Box = { x_min: number; y_min: number; x_max: number; y_max: number };

/** Room around the face, as a share of its larger side. */
const MARGIN = 0.35;

export function FaceCrop({ src, box, label }: { src: string | null; box: Box; label: string }) {
  const [size, setSize] = useState<{ width: number; height: number } | null>(null);
  useEffect(() => {
    if (!src) return;
    let stopped = false;
    const image = new Image();
    image.onload = () => !stopped && setSize({ width: image.naturalWidth, height: image.naturalHeight });
    image.src = src;
    return () => {
      stopped = true;
    };
  }, [src]);
  if (!src || !size) {
    return (
      <div class="face-crop" role="img" aria-label={label}>
        <span class="no-thumb" aria-hidden="true">{label.trim().charAt(0).toUpperCase() || "?"}</span>
      </div>
    );
  }
  const width = (box.x_max - box.x_min) * size.width;
  const height = (box.y_max - box.y_min) * size.height;
  const side = Math.max(width, height) * (1 + 2 * MARGIN);
  const x = (box.x_min * size.width + box.x_max * size.width) / 2 - side / 2;
  const y = (box.y_min * size.height + box.y_max * size.height) / 2 - side / 2;
  return (
    <div class="face-crop">
      <svg viewBox={`${x} ${y} ${side} ${side}`} preserveAspectRatio="xMidYMid slice" role="img" aria-label={label}>
        <image href={src} width={size.width} height={size.height} />
      </svg>
    </div>
  );
}
