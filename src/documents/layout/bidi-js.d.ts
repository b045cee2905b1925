/** Types for bidi-js 1.1.0 (the package ships none): the calls layout/bidi.ts makes. */
declare module "bidi-js" {
  interface EmbeddingLevels {
    levels: Uint8Array;
    paragraphs: { start: number; end: number; level: number }[];
  }
  interface Bidi {
    getEmbeddingLevels(text: string, direction?: "ltr" | "rtl" | "auto"): EmbeddingLevels;
    getReorderSegments(text: string, levels: EmbeddingLevels, start?: number, end?: number): [number, number][];
    getReorderedString(text: string, levels: EmbeddingLevels, start?: number, end?: number): string;
  }
  export default function bidiFactory(): Bidi;
}
