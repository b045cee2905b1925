/**
 * A BERT-style WordPiece tokenizer folder generated for the tests, for machines without the
 * shared all-MiniLM-L6-v2 tokenizer (../shared/models). transformers.js loads it exactly like the
 * real one (BertNormalizer lowercasing, BertPreTokenizer, [CLS] … [SEP] template, WordPiece).
 *
 * Its vocabulary: the special tokens, every printable ASCII character alone and as a `##`
 * continuation (so any ASCII text tokenizes without [UNK]), and every word that appears in the
 * test sources, so the words the tests upload and search for are single tokens as they mostly
 * are in the real vocabulary.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

const SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

function testWords(root: string): string[] {
  const words = new Set<string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith(".ts")) for (const word of readFileSync(full, "utf8").toLowerCase().match(/[a-z0-9]{2,24}/g) ?? []) words.add(word);
    }
  };
  walk(root);
  return [...words].sort();
}

/** Writes config.json, tokenizer.json, tokenizer_config.json, special_tokens_map.json and vocab.txt into `folder`. */
export function writeWordPieceTokenizer(folder: string): void {
  const characters: string[] = [];
  for (let code = 33; code < 127; code++) {
    const ch = String.fromCharCode(code);
    if (ch === ch.toLowerCase()) characters.push(ch);
  }
  const vocabulary = [...new Set([...SPECIALS, ...characters, ...characters.map((c) => `##${c}`), ...testWords(path.join(import.meta.dir, ".."))])];
  const ids = Object.fromEntries(vocabulary.map((token, id) => [token, id]));
  const special = (token: string) => ({ id: ids[token], content: token, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const tokenizer = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIALS.map(special),
    normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } }],
      pair: [
        { SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } },
        { Sequence: { id: "B", type_id: 1 } }, { SpecialToken: { id: "[SEP]", type_id: 1 } },
      ],
      special_tokens: Object.fromEntries(["[CLS]", "[SEP]"].map((t) => [t, { id: t, ids: [ids[t]], tokens: [t] }])),
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab: ids },
  };
  const names = { cls_token: "[CLS]", mask_token: "[MASK]", pad_token: "[PAD]", sep_token: "[SEP]", unk_token: "[UNK]" };
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, "tokenizer.json"), JSON.stringify(tokenizer));
  writeFileSync(
    path.join(folder, "tokenizer_config.json"),
    JSON.stringify({ ...names, tokenizer_class: "BertTokenizer", do_lower_case: true, model_max_length: 512, clean_up_tokenization_spaces: true }),
  );
  writeFileSync(path.join(folder, "special_tokens_map.json"), JSON.stringify(names));
  writeFileSync(path.join(folder, "vocab.txt"), vocabulary.join("\n") + "\n");
  writeFileSync(
    path.join(folder, "config.json"),
    JSON.stringify({ architectures: ["BertModel"], model_type: "bert", hidden_size: 384, max_position_embeddings: 512, pad_token_id: 0, vocab_size: vocabulary.length }),
  );
}
