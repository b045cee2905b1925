/**
 * A page image scaled to fit a model's square input, centred on grey (114, as YOLO models were
 * trained), as the float CHW tensor (RGB, 0-1) the model reads. sharp does the resampling.
 */
import sharp from "sharp";

/** Where the image sits in the square: scale and offsets map model pixels back to image pixels. */
export interface Letterboxed {
  /** The image's own size, pixels. */
  width: number;
  height: number;
  /** Model pixels per image pixel. */
  scale: number;
  /** The image's offset inside the square, model pixels. */
  dx: number;
  dy: number;
}

export interface RawImage {
  width: number;
  height: number;
  /** RGBA bytes, row by row. */
  data: Uint8Array | Uint8ClampedArray;
}

const PAD = 114;

export async function letterbox(image: RawImage, size: number): Promise<{ tensor: Float32Array; box: Letterboxed }> {
  const scale = Math.min(size / image.width, size / image.height);
  const w = Math.max(1, Math.min(size, Math.round(image.width * scale)));
  const h = Math.max(1, Math.min(size, Math.round(image.height * scale)));
  const dx = Math.floor((size - w) / 2);
  const dy = Math.floor((size - h) / 2);
  const pixels = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  const rgb = await sharp(pixels, { raw: { width: image.width, height: image.height, channels: 4 } })
    .removeAlpha()
    .resize(w, h, { fit: "fill" })
    .raw()
    .toBuffer();
  const plane = size * size;
  const tensor = new Float32Array(3 * plane).fill(PAD / 255);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const from = (y * w + x) * 3;
      const to = (y + dy) * size + x + dx;
      tensor[to] = rgb[from]! / 255;
      tensor[plane + to] = rgb[from + 1]! / 255;
      tensor[2 * plane + to] = rgb[from + 2]! / 255;
    }
  }
  return { tensor, box: { width: image.width, height: image.height, scale: w / image.width, dx, dy } };
}
