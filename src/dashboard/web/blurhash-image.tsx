/** A thumbnail that shows its blurhash until the image itself has loaded. */
import { decode } from "blurhash";
import { useEffect, useRef, useState } from "preact/hooks";

/** `label` stands in for a file with no picture (a document's type). */
export function BlurhashImage({ src, hash, alt, label }: { src: string | null; hash: string | null; alt: string; label?: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [loaded, setLoaded] = useState(false);
  useEffect(() => {
    if (!hash || !canvas.current) return;
    try {
      const pixels = decode(hash, 32, 32);
      const context = canvas.current.getContext("2d")!;
      const image = context.createImageData(32, 32);
      image.data.set(pixels);
      context.putImageData(image, 0, 0);
    } catch {
      // A malformed hash only costs the placeholder.
    }
  }, [hash]);
  return (
    <div class="thumb">
      {hash && !loaded ? <canvas ref={canvas} width={32} height={32} aria-hidden="true" /> : null}
      {src ? <img src={src} alt={alt} loading="lazy" onLoad={() => setLoaded(true)} class={loaded ? "loaded" : ""} /> : hash ? null : <span class="no-thumb" aria-hidden="true">{label}</span>}
    </div>
  );
}
