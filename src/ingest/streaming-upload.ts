/** `POST /files/upload`: one file streamed through the API into the blob store. */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Principal } from "../auth/principal.ts";
import type { IngestDeps } from "./deps.ts";
import { ApiError, badRequest } from "../errors.ts";
import { FIXED_LIMITS } from "../tenancy/tiers.ts";
import { detectType } from "./detect.ts";
import type { DetectedType, MediaType } from "../files/file.ts";
import { ingestStagedFile, sizeLimitViolation, unsupportedFile, type IngestOutcome } from "./ingest.ts";
import { originalBlobKey } from "../files/blob-keys.ts";
import type { FormReader } from "./multipart-form.ts";
import { parseUploadOptions, resolvePlacement, type UploadOptions } from "./options.ts";

/** What a caller other than POST /files/upload narrows (e.g. POST /images/analyze takes images only). */
export interface UploadPolicy {
  mediaTypes?: MediaType[];
  /** A lower size limit than the streaming upload's (e.g. 10 MB for synchronous analyze). */
  maxBytes?: number;
  /** Reads the caller's own form fields; throws to refuse the request before anything is stored. */
  readFields?: (fields: Record<string, string>) => void;
}

/** What a streaming upload stored (or skipped as a duplicate), for the route's response. */
export interface StoredUpload {
  fileId: string;
  status: IngestOutcome["status"];
  elapsedMs: number;
  skipped: boolean;
  skippedExistingId: string | null;
  storageTarget: UploadOptions["storageTarget"];
  type: DetectedType;
  thumbnailsStarted: boolean;
  analysisStarted: boolean;
}

export async function streamingUpload(ctx: IngestDeps, principal: Principal, readForm: FormReader, policy: UploadPolicy = {}): Promise<StoredUpload> {
  const started = performance.now();
  const stagingDir = join(ctx.dataDir.staging, `req-${crypto.randomUUID()}`);
  mkdirSync(stagingDir, { recursive: true });
  try {
    const maxBytes = policy.maxBytes ?? FIXED_LIMITS.maxImageBytes;
    const form = await readForm(stagingDir, {
      fileFields: ["file"],
      maxFileBytes: maxBytes,
      maxFiles: 1,
      maxTotalBytes: maxBytes + 1024 * 1024,
      abortOnOversizedFile: true,
      oversizeMessage: policy.maxBytes
        ? `files are limited to ${maxBytes / 1024 ** 2} MB through this endpoint; upload larger files with POST /files/upload and poll their status`
        : `files are limited to ${maxBytes / 1024 ** 2} MB through this endpoint; use the upload-intent flow (POST /files/uploads) for larger files`,
    });
    const staged = form.files[0];
    if (!staged?.path) throw badRequest("file: a file part named \"file\" is required");
    const options = parseUploadOptions(form.fields);
    policy.readFields?.(form.fields);
    const placement = await resolvePlacement(ctx, principal.orgId, options);
    const detection = await detectType(ctx.kinds.uploaded(), staged.head, staged.filename, staged.path);
    if (!detection.ok) throw unsupportedFile(detection.reason);
    if (policy.mediaTypes && !policy.mediaTypes.includes(detection.type.mediaType)) {
      throw new ApiError("WRONG_MEDIA_TYPE", `file: this endpoint takes ${policy.mediaTypes.join(" or ")} files; got ${detection.type.mediaType} (${detection.type.mime})`);
    }
    const tooLarge = sizeLimitViolation(ctx.kinds, detection.type, staged.size);
    if (tooLarge) throw new ApiError("FILE_TOO_LARGE", tooLarge);

    const fileId = crypto.randomUUID();
    const outcome = await ingestStagedFile(ctx, staged.path, {
      id: fileId,
      orgId: principal.orgId,
      filename: staged.filename,
      size: staged.size,
      sha256: staged.sha256,
      type: detection.type,
      blobKey: originalBlobKey(principal.orgId, fileId),
      uploadMethod: "streaming",
      sessionId: null,
      uploadedBy: principal.keyId,
      options,
      placement,
    });
    const skipped = outcome.status === "skipped";
    const pipeline = skipped ? null : ctx.kinds.for(detection.type.mediaType)?.pipeline ?? null;
    return {
      fileId: outcome.fileId,
      status: outcome.status,
      elapsedMs: performance.now() - started,
      skipped,
      skippedExistingId: outcome.skippedExistingId,
      storageTarget: options.storageTarget,
      type: detection.type,
      thumbnailsStarted: pipeline?.produces.thumbnails ?? false,
      analysisStarted: pipeline?.produces.analysis ?? false,
    };
  } finally {
    rmSync(stagingDir, { recursive: true, force: true });
  }
}
