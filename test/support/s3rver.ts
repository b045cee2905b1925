// Temporary alias while other branches still import it: the S3 test server is ./s3-server.ts.
export { startS3Server as startS3rver, type S3Fixture } from "./s3-server.ts";
