/** What the upload benches (upload.ts, upload-ab.ts) share: the file they send and the intent path. */

/** Writes `size` bytes that start like an MP4 (so the upload is accepted as a video) and do not compress; answers their SHA-256. */
export async function makeVideoFile(path: string, size: number): Promise<string> {
  const writer = Bun.file(path).writer();
  const chunk = new Uint8Array(4 * 1024 * 1024);
  const ftyp = new Uint8Array([0, 0, 0, 0x18, ...new TextEncoder().encode("ftypmp42"), 0, 0, 0, 0, ...new TextEncoder().encode("mp42isom")]);
  const hasher = new Bun.CryptoHasher("sha256");
  let written = 0;
  while (written < size) {
    for (let i = 0; i < chunk.length; i += 65536) crypto.getRandomValues(chunk.subarray(i, i + 65536));
    if (written === 0) chunk.set(ftyp);
    const piece = chunk.subarray(0, Math.min(chunk.length, size - written));
    writer.write(piece);
    hasher.update(piece);
    written += piece.length;
  }
  await writer.end();
  return hasher.digest("hex");
}

/**
 * The upload benches' 1 GB intent: a multipart upload intent for `path`, its 64 MiB parts PUT to
 * their presigned URLs by two workers and each confirmed, then completed. Throws on any refusal.
 */
export async function intentUpload(api: string, key: string, path: string, options: { size: number; sha256: string; filename: string }): Promise<void> {
  const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const res = await fetch(`${api}/files/uploads`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({
      filename: options.filename, content_type: "video/mp4", size_bytes: options.size, claimed_file_hash: options.sha256, upload_mode: "multipart", part_size_bytes: 64 * 1024 * 1024,
    }),
  });
  const created = (await res.json()) as { upload_id: string; part_size_bytes: number; part_urls: { part_number: number; url: string }[] };
  if (!res.ok) throw new Error(`intent refused: ${JSON.stringify(created)}`);
  const queue = [...created.part_urls];
  const worker = async () => {
    for (let part = queue.shift(); part; part = queue.shift()) {
      const start = (part.part_number - 1) * created.part_size_bytes;
      const slice = Bun.file(path).slice(start, Math.min(options.size, start + created.part_size_bytes));
      const put = await fetch(part.url, { method: "PUT", body: slice });
      if (put.status !== 200) throw new Error(`part ${part.part_number}: ${put.status} ${await put.text()}`);
      const confirm = await fetch(`${api}/files/uploads/${created.upload_id}/parts/confirm`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ part_number: part.part_number, etag: put.headers.get("etag"), size_bytes: slice.size }),
      });
      if (confirm.status !== 200) throw new Error(`confirm ${part.part_number}: ${await confirm.text()}`);
    }
  };
  await Promise.all([worker(), worker()]);
  const done = await fetch(`${api}/files/uploads/${created.upload_id}/complete`, { method: "POST", headers: auth, body: "{}" });
  if (done.status !== 200) throw new Error(`complete failed: ${done.status} ${await done.text()}`);
}
