/** oidc-provider ships no types; the tests use a small part of it (test/support/cloud-servers.ts). */
declare module "oidc-provider" {
  const Provider: any;
  export default Provider;
}
