/**
 * The data directory's layout: the one place that knows where each thing lives under
 * `--data-dir`. Everything that builds a path there asks this module, so the layout the README's
 * Operations section documents (what to back up, what is safe to lose) is written down once.
 *
 * It lives in storage/ rather than ops/ because it is the map of what the appliance stores on
 * disk: the database, blobs, secrets and in-flight bytes; ops/ (the lock, housekeeping) and db/
 * are its users. It only computes paths (no I/O), so any module can use it without cycles.
 *
 * These paths are the on-disk contract of existing data directories: renaming one would strand
 * the data of every installed appliance.
 */
import { join } from "node:path";

/** The local blob store's directories (local-store.ts). */
export interface LocalBlobLayout {
  /** Acknowledged objects, `<objects>/<key>`: back them up. */
  objects: string;
  /** Multipart uploads in progress, one directory per upload id. */
  multipart: string;
  /** Objects being written; never acknowledged, swept when the store opens. */
  tmp: string;
}

/**
 * The places a backup archive holds, by their paths relative to the data directory (the archive
 * mirrors the layout, so a restore puts each entry back where DataDir expects it).
 */
export const BACKED_UP_PLACES = { database: "mediabox.db", blobs: "blobs/objects", secrets: "secrets" } as const;

export class DataDir {
  /** The SQLite database (its -wal and -shm files sit beside it). */
  readonly database: string;
  /** Held with flock(2) by the running server (ops/data-dir-lock.ts). */
  readonly lockFile: string;
  readonly blobs: LocalBlobLayout;
  /** Secrets generated on first start; back them up with the database. */
  readonly secrets: string;
  /** The signing secret of local presigned URLs (storage/local-credentials.ts). */
  readonly localS3Secret: string;
  /** The key cloud drive tokens are encrypted with, unless a setting gives one (cloud/token-vault.ts). */
  readonly cloudTokenKey: string;
  /**
   * Request bodies being received (streaming and batch uploads), one directory per request or
   * batch session; what no session row claims is swept at start. On the blobs' volume, so a
   * staged file is moved into the local store rather than copied.
   */
  readonly staging: string;
  /** Scratch files of the pipelines (OCR, document reader, intent checks); emptied at every start. */
  readonly scratch: string;
  /** On a PostgreSQL deployment, this process's cache of the built-in text model's word vectors (src/opened-database.ts). */
  readonly textCache: string;

  constructor(readonly root: string) {
    this.database = join(root, BACKED_UP_PLACES.database);
    this.lockFile = join(root, "mediabox.lock");
    const blobs = join(root, "blobs");
    this.blobs = { objects: join(blobs, "objects"), multipart: join(blobs, "multipart"), tmp: join(blobs, "tmp") };
    this.secrets = join(root, BACKED_UP_PLACES.secrets);
    this.localS3Secret = join(this.secrets, "local-s3.json");
    this.cloudTokenKey = join(this.secrets, "cloud-token.key");
    this.staging = join(root, "staging");
    this.scratch = join(root, "tmp");
    this.textCache = join(root, "text-cache.db");
  }
}
