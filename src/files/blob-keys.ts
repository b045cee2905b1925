/**
 * Where a file's bytes live in the blob store. Every key is under its organization and its file,
 * so one file's objects are found (and purged) by id alone, and no two files share an object.
 */
export const originalBlobKey = (orgId: string, fileId: string) => `orgs/${orgId}/files/${fileId}/original`;

/** A rendered image variant (tiny_64, small_256, ...), always WebP. */
export const variantBlobKey = (orgId: string, fileId: string, variant: string) => `orgs/${orgId}/files/${fileId}/variants/${variant}.webp`;

/** A video's keyframe as sampled (JPEG), by its index in time order. */
export const keyframeBlobKey = (orgId: string, fileId: string, index: number) => `orgs/${orgId}/files/${fileId}/keyframes/${index}.jpg`;
/** A PDF page drawn `width` pixels wide (WebP), cached for the dashboard (documents/page-images.ts). */
export const pageImageBlobKey = (orgId: string, fileId: string, page: number, width: number) => `orgs/${orgId}/files/${fileId}/pages/${page}-w${width}.webp`;
/** A link's page icon, as fetched (its type is kept on the row). */
export const faviconBlobKey = (orgId: string, fileId: string) => `orgs/${orgId}/files/${fileId}/favicon`;

/** A link's offline reading copy (one self-contained HTML document). */
export const snapshotBlobKey = (orgId: string, fileId: string) => `orgs/${orgId}/files/${fileId}/snapshot.html`;
