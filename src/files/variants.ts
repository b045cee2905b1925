/**
 * The resized copies a picture has (an image, a video's poster): their names, which the API
 * exposes (GET /files/{id}/variant/{variant_type}, thumbnail/medium/full URLs), and their
 * longest sides in pixels. Rendering them is the image kind's (images/variants.ts).
 */
export const VARIANT_SIZES = { tiny_64: 64, small_256: 256, medium_750: 750, large_1024: 1024 } as const;
export type VariantType = keyof typeof VARIANT_SIZES;
export const VARIANT_TYPES = Object.keys(VARIANT_SIZES) as VariantType[];
