/**
 * An S3 server on loopback for the S3 backend's tests, first found wins:
 * - Versity S3 Gateway (`versitygw`, Apache-2.0, a production S3 gateway over a POSIX directory):
 *   verifies SigV4 signatures and x-amz-checksum-sha256 and has the whole multipart API.
 *   Looked for at `MEDIABOX_TEST_VERSITYGW`, then /opt/mediabox-test/versitygw/versitygw (.ci/run
 *   builds it there with `go install`), then on PATH.
 * - s3rver (npm, in-process): what a machine without versitygw runs. Known gaps against AWS S3:
 *   no SigV4 signature or x-amz-checksum-sha256 verification, no ListParts or
 *   AbortMultipartUpload. Tests of those ask `s3.verifiesSignatures` and skip, saying why.
 */
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { PutBucketCorsCommand } from "@aws-sdk/client-s3";
import S3rver from "s3rver";
import { BROWSER_UPLOAD_RULE } from "../../src/storage/bucket-cors.ts";
import { makeS3Client } from "../../src/storage/presigner.ts";
import { waitFor } from "./polling.ts";
import { tempDir } from "./temp-dir.ts";
import { freePort } from "./free-port.ts";

export const VERSITYGW_PATH = "/opt/mediabox-test/versitygw/versitygw";

export interface S3Fixture {
  /** Which server answers: "versitygw" or "s3rver". */
  server: "versitygw" | "s3rver";
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Whether the server refuses a request whose signature or checksum is wrong (versitygw does; s3rver does not). */
  verifiesSignatures: boolean;
  /** Environment that points a Mediabox server at this endpoint. */
  env: Record<string, string>;
  /**
   * Another bucket on the same server, made empty unless it exists (both servers keep a bucket as a
   * top-level directory, so making one is a mkdir); returns the environment that points a
   * Mediabox server at it.
   */
  addBucket(name: string): Record<string, string>;
  /** Gives `name` the CORS rule the README asks of a site, so the dashboard's browser uploads reach it. */
  allowBrowserUploads(name: string): Promise<void>;
  /** Removes a bucket made by addBucket, with its objects. */
  removeBucket(name: string): void;
  close(): Promise<void>;
}

/** The versitygw binary to test with, or null (s3rver then). */
export function findVersitygw(): string | null {
  const candidates = [process.env.MEDIABOX_TEST_VERSITYGW, VERSITYGW_PATH].filter((p): p is string => Boolean(p));
  const found = candidates.find((p) => existsSync(p));
  if (found) return found;
  return Bun.which("versitygw");
}

let announced = false;

export async function startS3Server(): Promise<S3Fixture> {
  const binary = findVersitygw();
  if (binary) return startVersitygw(binary);
  if (!announced) {
    announced = true;
    console.warn("S3 tests use s3rver: no versitygw found (run .ci/run, or set MEDIABOX_TEST_VERSITYGW); signature and checksum refusals are not checked");
  }
  return startS3rver();
}

function fixture(server: S3Fixture["server"], endpoint: string, bucketsDir: string, bucket: string, accessKeyId: string, secretAccessKey: string, close: () => Promise<void>): S3Fixture {
  const envFor = (name: string) => ({
    MEDIABOX_STORAGE: "s3",
    MEDIABOX_S3_BUCKET: name,
    MEDIABOX_S3_ENDPOINT: endpoint,
    MEDIABOX_S3_REGION: "us-east-1",
    MEDIABOX_S3_ACCESS_KEY_ID: accessKeyId,
    MEDIABOX_S3_SECRET_ACCESS_KEY: secretAccessKey,
    MEDIABOX_S3_FORCE_PATH_STYLE: "true",
  });
  const bucketDir = (name: string) => {
    if (!/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(name)) throw new Error(`bad bucket name ${name}`);
    return join(bucketsDir, name);
  };
  return {
    server,
    endpoint,
    bucket,
    accessKeyId,
    secretAccessKey,
    verifiesSignatures: server === "versitygw",
    env: envFor(bucket),
    addBucket(name) {
      mkdirSync(bucketDir(name), { recursive: true });
      return envFor(name);
    },
    async allowBrowserUploads(name) {
      const client = makeS3Client({ region: "us-east-1", endpoint, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
      await client.send(new PutBucketCorsCommand({ Bucket: name, CORSConfiguration: { CORSRules: [BROWSER_UPLOAD_RULE] } }));
      client.destroy();
    },
    removeBucket(name) {
      rmSync(bucketDir(name), { recursive: true, force: true });
    },
    close,
  };
}

async function startVersitygw(binary: string): Promise<S3Fixture> {
  const root = tempDir("mediabox-versitygw-");
  const bucket = "mediabox-test";
  // A top-level directory is a bucket; metadata goes to a sidecar directory, as tmpfs may lack user xattrs.
  mkdirSync(join(root, "buckets", bucket), { recursive: true });
  mkdirSync(join(root, "meta"));
  const accessKeyId = "mediabox-test";
  const secretAccessKey = crypto.randomUUID();
  // A port found free can be taken before the gateway binds it: try another.
  for (let attempt = 1; ; attempt++) {
    const port = freePort();
    const proc = Bun.spawn(
      [binary, "--access", accessKeyId, "--secret", secretAccessKey, "--port", `127.0.0.1:${port}`, "--quiet", "posix", "--sidecar", join(root, "meta"), join(root, "buckets")],
      { stdout: "ignore", stderr: "pipe" },
    );
    const endpoint = `http://127.0.0.1:${port}`;
    let exited = false;
    void proc.exited.then(() => (exited = true));
    try {
      await waitFor(
        async () => {
          if (exited) throw new Error(`versitygw exited (${proc.exitCode}): ${await new Response(proc.stderr).text()}`);
          // Any S3 answer (403 to an unsigned request) means it is serving.
          return fetch(endpoint, { signal: AbortSignal.timeout(2_000) }).then((r) => r.status > 0, () => false);
        },
        { what: "versitygw to answer", timeoutMs: 30_000 },
      );
    } catch (err) {
      proc.kill("SIGKILL");
      await proc.exited;
      if (attempt >= 3) throw err;
      continue;
    }
    return fixture("versitygw", endpoint, join(root, "buckets"), bucket, accessKeyId, secretAccessKey, async () => {
      proc.kill("SIGTERM");
      const stopped = await Promise.race([proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
      if (!stopped) {
        proc.kill("SIGKILL");
        await proc.exited;
      }
      rmSync(root, { recursive: true, force: true });
    });
  }
}

async function startS3rver(): Promise<S3Fixture> {
  const directory = tempDir("mediabox-s3rver-");
  const bucket = "mediabox-test";
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory, configureBuckets: [{ name: bucket }] });
  const info = await server.run();
  return fixture("s3rver", `http://127.0.0.1:${info.port}`, directory, bucket, "S3RVER", "S3RVER", async () => {
    await server.close();
    rmSync(directory, { recursive: true, force: true });
  });
}
