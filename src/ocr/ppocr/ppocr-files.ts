/**
 * The files of a PP-OCR model folder. Its own module so that checking for the folder (the OCR
 * router, at start) does not load onnxruntime: only the OCR thread does, when it reads.
 */
export const PPOCR_FILES = { det: "det.onnx", rec: "rec.onnx", cls: "cls.onnx", keys: "keys.txt" } as const;
