/**
 * Whether a rendered image is worth reading with OCR: the text-likelihood test
 * (ocr/text-likelihood.ts) on a grey copy of the pixels the variants were made from, so no
 * stage decodes the original again for it. bench:ocr prints how often it lets text through.
 */
import sharp from "sharp";
import { textLikelihood, type TextLikelihood } from "../ocr/text-likelihood.ts";
import type { DecodedPixels } from "./variants.ts";

export async function textLikelihoodOf(pixels: DecodedPixels): Promise<TextLikelihood> {
  const { data, info } = await sharp(pixels.data, { raw: { width: pixels.width, height: pixels.height, channels: pixels.channels } })
    .flatten({ background: "#ffffff" })
    .greyscale()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return textLikelihood(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), info.width, info.height);
}

/** What the image pipeline records as the source of an image OCR was not run on. */
export const TEXT_GATE_MODEL = "mediabox text gate (no rows of character-like marks; OCR not run)";
