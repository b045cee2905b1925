/** Builds the configured blob store. */
import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { BlobStore } from "./blob-store.ts";
import type { DataDir } from "./data-dir.ts";
import { loadLocalCredentials } from "./local-credentials.ts";
import { LocalBlobStore } from "./local-store.ts";
import { makeS3Client } from "./presigner.ts";
import { S3BlobStore } from "./s3-store.ts";

export function createBlobStore(config: Config, dataDir: DataDir, clock: Clock): BlobStore {
  if (config.storage === "s3") {
    const client = makeS3Client({
      region: config.s3Region,
      endpoint: config.s3Endpoint,
      forcePathStyle: config.s3ForcePathStyle,
      credentials:
        config.s3AccessKeyId && config.s3SecretAccessKey
          ? { accessKeyId: config.s3AccessKeyId, secretAccessKey: config.s3SecretAccessKey }
          : null,
    });
    return new S3BlobStore(client, config.s3Bucket!, clock);
  }
  return new LocalBlobStore(dataDir.blobs, loadLocalCredentials(dataDir.localS3Secret), clock);
}
