/**
 * A real S3-compatible server (s3rver, on disk) for running the S3 backend's tests without a
 * network. Known gaps against AWS S3, which the tests account for: it does not verify SigV4
 * signatures or x-amz-checksum-sha256, and has no ListParts or AbortMultipartUpload.
 */
import { rmSync } from "node:fs";
import S3rver from "s3rver";
import { tempDir } from "./server.ts";

export interface S3Fixture {
  endpoint: string;
  bucket: string;
  /** Environment that points a Mediabox server at this endpoint. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startS3rver(): Promise<S3Fixture> {
  const directory = tempDir("mediabox-s3rver-");
  const bucket = "mediabox-test";
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory, configureBuckets: [{ name: bucket }] });
  const info = await server.run();
  const endpoint = `http://127.0.0.1:${info.port}`;
  return {
    endpoint,
    bucket,
    env: {
      MEDIABOX_STORAGE: "s3",
      MEDIABOX_S3_BUCKET: bucket,
      MEDIABOX_S3_ENDPOINT: endpoint,
      MEDIABOX_S3_REGION: "us-east-1",
      MEDIABOX_S3_ACCESS_KEY_ID: "S3RVER",
      MEDIABOX_S3_SECRET_ACCESS_KEY: "S3RVER",
      MEDIABOX_S3_FORCE_PATH_STYLE: "true",
    },
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
