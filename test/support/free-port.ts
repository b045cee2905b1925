/**
 * A loopback port free right now, for a server the test starts as another program (PostgreSQL,
 * Dovecot, versitygw) that must be told its port. It can be taken before that program binds it:
 * callers retry a start that fails.
 */
export function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}
