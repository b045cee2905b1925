/**
 * Cuts a stream of concatenated JPEG images (ffmpeg's `-f image2pipe -c:v mjpeg` output) into
 * single images as the bytes arrive. An image ends at its EOI marker, found by walking the
 * marker segments by their lengths and, inside entropy-coded data, skipping stuffed 0xFF00 bytes
 * and restart markers: searching for the bytes FF D9 alone could stop inside a table.
 */

/** An image longer than this is not what ffmpeg's encoder writes at our sizes: the stream is garbage. */
const MAX_IMAGE_BYTES = 32 * 1024 * 1024;

export class JpegStreamError extends Error {
  override name = "JpegStreamError";
}

export class JpegSplitter {
  private buffer = Buffer.alloc(0);
  /** Where parsing resumes in `buffer` (the current image starts at 0). */
  private pos = 0;
  /** Inside the entropy-coded data that follows a SOS segment. */
  private inScan = false;

  /** Adds bytes; returns the images they complete, in order. */
  push(chunk: Uint8Array): Buffer[] {
    this.buffer = this.buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.buffer, chunk]);
    const images: Buffer[] = [];
    for (;;) {
      const end = this.findEnd();
      if (end === null) break;
      images.push(Buffer.from(this.buffer.subarray(0, end)));
      this.buffer = this.buffer.subarray(end);
      this.pos = 0;
      this.inScan = false;
    }
    if (this.buffer.length > MAX_IMAGE_BYTES) throw new JpegStreamError(`an image in the stream is over ${MAX_IMAGE_BYTES} bytes`);
    return images;
  }

  /** Bytes received that do not (yet) make an image. */
  get pending(): number {
    return this.buffer.length;
  }

  /** Offset just past the current image's EOI, or null if it is not all here yet. */
  private findEnd(): number | null {
    const b = this.buffer;
    if (this.pos === 0) {
      if (b.length < 2) return null;
      if (b[0] !== 0xff || b[1] !== 0xd8) throw new JpegStreamError("the stream does not start with a JPEG image");
      this.pos = 2;
    }
    while (this.pos < b.length) {
      if (this.inScan) {
        // Entropy-coded data: FF 00 is a stuffed byte and FF D0-D7 a restart marker; any other FF xx ends the scan.
        const ff = b.indexOf(0xff, this.pos);
        if (ff < 0 || ff + 1 >= b.length) {
          this.pos = ff < 0 ? b.length : ff;
          return null;
        }
        const next = b[ff + 1]!;
        if (next === 0x00 || (next >= 0xd0 && next <= 0xd7) || next === 0xff) {
          this.pos = next === 0xff ? ff + 1 : ff + 2;
          continue;
        }
        this.inScan = false;
        this.pos = ff;
        continue;
      }
      if (this.pos + 1 >= b.length) return null;
      if (b[this.pos] !== 0xff) throw new JpegStreamError(`a JPEG marker was expected at byte ${this.pos}`);
      const marker = b[this.pos + 1]!;
      if (marker === 0xff) {
        this.pos += 1; // fill byte before a marker
        continue;
      }
      if (marker === 0xd9) return this.pos + 2;
      if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
        this.pos += 2;
        continue;
      }
      if (this.pos + 3 >= b.length) return null;
      const length = b.readUInt16BE(this.pos + 2);
      if (length < 2) throw new JpegStreamError(`a JPEG segment of length ${length}`);
      if (this.pos + 2 + length > b.length) return null;
      this.pos += 2 + length;
      if (marker === 0xda) this.inScan = true;
    }
    return null;
  }
}
