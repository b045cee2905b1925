/**
 * Files sent as a client sends them: one multipart POST /files/upload with the file and its form
 * fields (auto_describe, compliance_type, …), for tests about what happens to the file next.
 */
import { expect } from "bun:test";
import type { ApiClient, ApiResponse } from "./server.ts";

/** POSTs one file and `fields` as multipart to `path`; answers the server's response as it is. */
export function postFile(
  api: ApiClient,
  bytes: Uint8Array | string,
  filename: string,
  fields: Record<string, string> = {},
  { path = "/files/upload", type }: { path?: string; type?: string } = {},
): Promise<ApiResponse> {
  const form = new FormData();
  form.append("file", new File([bytes as BlobPart], filename, type ? { type } : {}));
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return api.form(path, form);
}

/** Uploads one file and answers its id; anything but 201 fails the test with the server's answer. */
export async function uploadFile(
  api: ApiClient,
  bytes: Uint8Array | string,
  filename: string,
  fields: Record<string, string> = {},
  options: { type?: string } = {},
): Promise<string> {
  const res = await postFile(api, bytes, filename, fields, options);
  expect(res.status, `${filename}: ${JSON.stringify(res.body)}`).toBe(201);
  return res.body.image_id as string;
}
