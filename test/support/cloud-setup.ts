/**
 * A Mediabox server wired to the test cloud servers (test/support/cloud-servers.ts): one
 * authorization server for both providers, a Drive-shaped API and a Nextcloud-shaped server.
 * `startCloudStack` starts them all; `stop` stops them all whatever state they are in.
 */
import { rmSync } from "node:fs";
import { startTestServer, tempDir, type Tenant, type TestServer } from "./server.ts";
import { consent, startAuthServer, startDriveServer, startNextcloudServer, type AuthServer, type DriveServer, type NextcloudServer } from "./cloud-servers.ts";

export interface CloudStack {
  as: AuthServer;
  drive: DriveServer;
  nextcloud: NextcloudServer;
  server: TestServer;
  dataDir: string;
  /** Mediabox's settings for these servers (for a server started as a child process). */
  env: Record<string, string>;
  /** Stops Mediabox (jobs handed back as at a shutdown) and starts it again on the same data directory. */
  restart(): Promise<TestServer>;
  stop(): Promise<void>;
}

export const DRIVE_CLIENT = { clientId: "mediabox-drive", clientSecret: "drive-secret-0123456789" };
export const NEXTCLOUD_CLIENT = { clientId: "mediabox-nextcloud", clientSecret: "nextcloud-secret-0123456789" };

export async function startCloudStack(options: { env?: Record<string, string> } = {}): Promise<CloudStack> {
  const dataDir = tempDir("mediabox-cloud-");
  const started: { stop(): Promise<void> }[] = [{ stop: async () => rmSync(dataDir, { recursive: true, force: true }) }];
  const stopAll = async () => {
    await Promise.allSettled(started.reverse().map((s) => s.stop()));
  };
  try {
    const as = await startAuthServer();
    started.push(as);
    const drive = startDriveServer(as);
    started.push(drive);
    const nextcloud = await startNextcloudServer(as);
    started.push(nextcloud);
    const env: Record<string, string> = {
        MEDIABOX_GOOGLE_DRIVE_CLIENT_ID: DRIVE_CLIENT.clientId,
        MEDIABOX_GOOGLE_DRIVE_CLIENT_SECRET: DRIVE_CLIENT.clientSecret,
        MEDIABOX_GOOGLE_DRIVE_AUTH_URL: `${as.url}/auth`,
        MEDIABOX_GOOGLE_DRIVE_TOKEN_URL: `${as.url}/token`,
        MEDIABOX_GOOGLE_DRIVE_REVOKE_URL: `${as.url}/token/revocation`,
        MEDIABOX_GOOGLE_DRIVE_API_URL: `${drive.url}/drive/v3`,
        MEDIABOX_GOOGLE_DRIVE_UPLOAD_URL: `${drive.url}/upload/drive/v3`,
        MEDIABOX_GOOGLE_DRIVE_SCOPES: "openid email profile",
        MEDIABOX_GOOGLE_PICKER_APP_ID: "123456789",
        MEDIABOX_GOOGLE_PICKER_DEVELOPER_KEY: "test-developer-key",
        MEDIABOX_NEXTCLOUD_URL: nextcloud.url,
        MEDIABOX_NEXTCLOUD_CLIENT_ID: NEXTCLOUD_CLIENT.clientId,
        MEDIABOX_NEXTCLOUD_CLIENT_SECRET: NEXTCLOUD_CLIENT.clientSecret,
        MEDIABOX_NEXTCLOUD_AUTH_URL: `${as.url}/auth`,
        MEDIABOX_NEXTCLOUD_TOKEN_URL: `${as.url}/token`,
        MEDIABOX_NEXTCLOUD_REVOKE_URL: `${as.url}/token/revocation`,
        MEDIABOX_NEXTCLOUD_SCOPES: "openid",
        ...options.env,
    };
    let server = await startTestServer({ dataDir, env });
    started.push({ stop: () => server.close() });
    as.configure([
      { ...DRIVE_CLIENT, redirectUri: `${server.url}/api/v2/cloud-storage/auth/google_drive/callback` },
      { ...NEXTCLOUD_CLIENT, redirectUri: `${server.url}/api/v2/cloud-storage/auth/nextcloud/callback` },
    ]);
    const stack: CloudStack = {
      as,
      drive,
      nextcloud,
      server,
      dataDir,
      env,
      async restart() {
        await server.close();
        server = stack.server = await startTestServer({ dataDir, env });
        return server;
      },
      stop: stopAll,
    };
    return stack;
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** Connects a drive the way the dashboard would, completing with the POST callback. */
export async function connect(stack: CloudStack, tenant: Tenant, provider: "google_drive" | "nextcloud") {
  const start = await tenant.api.post(`/cloud-storage/auth/${provider}`);
  if (start.status !== 200) throw new Error(`auth start answered ${start.status} ${JSON.stringify(start.body)}`);
  const callback = await consent(start.body.authorization_url, "allow", stack.server.url);
  const done = await tenant.api.post(`/cloud-storage/auth/${provider}/callback`, { code: callback.searchParams.get("code"), state: callback.searchParams.get("state") });
  if (done.status !== 200) throw new Error(`callback answered ${done.status} ${JSON.stringify(done.body)}`);
  return done.body as { connection: { id: string; provider: string; provider_email: string; is_token_expired: boolean }; is_new: boolean };
}
