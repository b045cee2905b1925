/**
 * The key/value metadata of an ONNX model file (ModelProto field 14, `metadata_props`), which
 * onnxruntime's JavaScript API does not expose. PaddleOCR recognition models exported for
 * RapidOCR carry their alphabet there (key "character", one character per line). Only the
 * top-level protobuf fields are walked; the graph's bytes are skipped, not parsed.
 */

const METADATA_PROPS = 14;

export function onnxMetadata(model: Uint8Array): Map<string, string> {
  const found = new Map<string, string>();
  const reader = new ProtoReader(model);
  while (!reader.done()) {
    const { field, wire } = reader.tag();
    if (field === METADATA_PROPS && wire === 2) {
      const entry = new ProtoReader(reader.bytes());
      let key = "", value = "";
      while (!entry.done()) {
        const t = entry.tag();
        if (t.wire !== 2) {
          entry.skip(t.wire);
          continue;
        }
        const text = new TextDecoder().decode(entry.bytes());
        if (t.field === 1) key = text;
        else if (t.field === 2) value = text;
      }
      found.set(key, value);
    } else {
      reader.skip(wire);
    }
  }
  return found;
}

class ProtoReader {
  private at = 0;
  constructor(private readonly buffer: Uint8Array) {}

  done(): boolean {
    return this.at >= this.buffer.length;
  }

  tag(): { field: number; wire: number } {
    const value = this.varint();
    return { field: Math.floor(value / 8), wire: value % 8 };
  }

  bytes(): Uint8Array {
    const size = this.varint();
    if (this.at + size > this.buffer.length) throw new Error("ONNX model is truncated");
    const out = this.buffer.subarray(this.at, this.at + size);
    this.at += size;
    return out;
  }

  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.at += 8;
    else if (wire === 2) {
      const size = this.varint(); // read first: `this.at += this.varint()` would add to the position before the length
      this.at += size;
    }
    else if (wire === 5) this.at += 4;
    else throw new Error(`ONNX model has an unsupported protobuf wire type ${wire}`);
    if (this.at > this.buffer.length) throw new Error("ONNX model is truncated");
  }

  private varint(): number {
    let value = 0;
    let factor = 1;
    for (;;) {
      if (this.at >= this.buffer.length) throw new Error("ONNX model is truncated");
      const byte = this.buffer[this.at++]!;
      value += (byte & 0x7f) * factor;
      if (byte < 0x80) return value;
      factor *= 128;
    }
  }
}
