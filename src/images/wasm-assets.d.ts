// wasm files imported with `with { type: "file" }` resolve to a path (embedded in the compiled binary).
declare module "*.wasm" {
  const path: string;
  export default path;
}
