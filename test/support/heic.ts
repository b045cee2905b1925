/** The committed HEIC fixtures (made by scripts/make-heic-fixtures.ts) and what they show. */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const HEIC_TEXT_LINES = ["HEIC INVOICE 4471", "Paid in full"];

const fixture = (name: string) => readFileSync(join(import.meta.dir, "..", "fixtures", "heic", name));

/** 800×400, left half rgb(220,30,30), right half rgb(30,30,220). */
export const heicHalves = () => fixture("halves.heic");
/** HEIC_TEXT_LINES as black text on white (textImage's layout). */
export const heicText = () => fixture("text.heic");
