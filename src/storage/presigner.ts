/**
 * Presigned URLs for both backends, produced by the AWS presigner so they are real SigV4 query
 * signatures that any S3 client or plain HTTP client can use. On PUT, the checksum headers stay
 * signed headers (not hoisted into the query) so the store verifies the client's SHA-256, and
 * Content-Type is signed too (the AWS presigner leaves it out unless asked), so an upload
 * cannot change the type it was granted. GETs carry only what serving-policy.ts allows: a safe
 * response type, an attachment for anything active, and a bounded download name.
 */
import { GetObjectCommand, PutObjectCommand, S3Client, UploadPartCommand } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import type { Clock } from "../clock.ts";
import type { PresignGetOptions, PresignPutOptions } from "./blob-store.ts";
import { attachmentDisposition } from "./content-disposition.ts";
import { servedContentType, servedDisposition } from "./serving-policy.ts";

const CHECKSUM_HEADERS = new Set(["x-amz-checksum-sha256", "x-amz-sdk-checksum-algorithm"]);
const SIGNED_PUT_HEADERS = new Set(["content-type"]);

export class Presigner {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly clock: Clock,
  ) {}

  private sign(
    command: PutObjectCommand | UploadPartCommand | GetObjectCommand,
    expiresIn: number,
    extra: { unhoistableHeaders?: Set<string>; signableHeaders?: Set<string> } = {},
  ) {
    // The presigner's Command type is declared against its own copy of the smithy types; the
    // cast bridges two structurally equal declarations.
    return getSignedUrl(this.client, command as unknown as Parameters<typeof getSignedUrl>[1], {
      expiresIn,
      signingDate: new Date(this.clock.now()),
      ...extra,
    });
  }

  put(key: string, options: PresignPutOptions): Promise<string> {
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ContentType: options.contentType,
      ...(options.checksumSha256Base64 ? { ChecksumSHA256: options.checksumSha256Base64, ChecksumAlgorithm: "SHA256" } : {}),
    });
    return this.sign(command, options.expiresInSeconds, { unhoistableHeaders: CHECKSUM_HEADERS, signableHeaders: SIGNED_PUT_HEADERS });
  }

  part(key: string, uploadId: string, partNumber: number, expiresIn: number): Promise<string> {
    return this.sign(new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber: partNumber }), expiresIn);
  }

  get(key: string, options: PresignGetOptions): Promise<string> {
    const type = servedContentType(options.contentType);
    const disposition = servedDisposition(type, options.downloadName ? attachmentDisposition(options.downloadName) : null);
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentType: type,
      ...(disposition ? { ResponseContentDisposition: disposition } : {}),
    });
    return this.sign(command, options.expiresInSeconds);
  }
}

export interface S3ClientSettings {
  region: string;
  endpoint?: string | null;
  forcePathStyle?: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string } | null;
}

export function makeS3Client(settings: S3ClientSettings): S3Client {
  return new S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle ?? false,
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
    // Only add checksums we ask for: the default would sign a CRC32 into every presigned URL.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}
