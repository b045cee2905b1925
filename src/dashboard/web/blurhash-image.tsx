/** A thumbnail that shows its blurhash until the image itself has loaded. */
import { decode } from "blurhash";
import { useEffect, useRef, useState } from "preact/hooks";

/**
 * `label` stands in for a file with no picture (a document's type). `pictureOf` fetches a
 * picture's URL once the thumbnail nears the viewport (a PDF's first page, drawn by the server
 * on its first request), for files whose listing carries none.
 */
export function BlurhashImage({ src, hash, alt, label, pictureOf }: { src: string | null; hash: string | null; alt: string; label?: string; pictureOf?: () => Promise<string | null> }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const [loaded, setLoaded] = useState(false);
  const [fetched, setFetched] = useState<string | null>(null);
  useEffect(() => {
    if (src || !pictureOf || !box.current) return;
    let stopped = false;
    const observer = new IntersectionObserver(
      (entries) => {
        if (!entries.some((e) => e.isIntersecting)) return;
        observer.disconnect();
        pictureOf().then((url) => !stopped && setFetched(url), () => null);
      },
      { rootMargin: "200px" },
    );
    observer.observe(box.current);
    return () => {
      stopped = true;
      observer.disconnect();
    };
  }, [src]);
  src = src ?? fetched;
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
    <div class="thumb" ref={box}>
      {hash && !loaded ? <canvas ref={canvas} width={32} height={32} aria-hidden="true" /> : null}
      {src ? <img src={src} alt={alt} loading="lazy" onLoad={() => setLoaded(true)} class={loaded ? "loaded" : ""} /> : null}
      {!loaded && !hash ? <span class="no-thumb" aria-hidden="true">{label}</span> : null}
    </div>
  );
}
