/**
 * Real documents made for the tests: a laid-out PDF report (pdf-lib), a scanned PDF (an image of
 * text and nothing else), a corrupt and an encrypted PDF, a DOCX report (docx), Markdown and text.
 */
import { AlignmentType, Document, HeadingLevel, ImageRun, LevelFormat, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from "docx";
import { PDFDocument, StandardFonts, rgb } from "pdf-lib";
import sharp from "sharp";

/** A4 in points. */
export const A4 = { width: 595, height: 842 };
/** Where reportPdf draws its figure, in PDF points (origin bottom-left). */
export const REPORT_FIGURE = { x: 350, y: 150, width: 150, height: 100 };

/** Greedy word wrap to at most `width` characters a line. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && `${line} ${word}`.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

export const REPORT_PARAGRAPHS = [
  "This report summarises the safety inspections carried out at the quarry during the year. Every conveyor, crusher and pump was inspected at least twice and the results are recorded below for the operations team.",
  "Inspections followed the company procedure for heavy equipment. Findings that need action are listed with their owners, and all of them were closed before the end of the reporting period.",
];
export const REPORT_FINDINGS =
  "During the March inspection the main valve VX-4471 was replaced after a pressure test showed a slow leak at the flange. The replacement part was fitted by the maintenance crew and tested the same day.";

/**
 * Two A4 pages. Page 1: a 24 pt title, a 16 pt heading, two 11 pt paragraphs, a bulleted list, two
 * "Label: value" lines, a 3-column table drawn as text at fixed x positions and a picture at
 * REPORT_FIGURE. Page 2: a heading and a paragraph naming valve VX-4471.
 */
export async function reportPdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle("Annual Safety Report");
  pdf.setAuthor("Quarry Safety Office");
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const page = pdf.addPage([A4.width, A4.height]);
  let y = 780;
  const text = (s: string, size: number, f = font, x = 50) => page.drawText(s, { x, y, size, font: f, color: rgb(0, 0, 0) });
  text("Annual Safety Report", 24, bold);
  y -= 45;
  text("1. Introduction", 16, bold);
  y -= 28;
  for (const p of REPORT_PARAGRAPHS) {
    for (const line of wrap(p, 90)) {
      text(line, 11);
      y -= 15;
    }
    y -= 12;
  }
  for (const item of ["• Inspect valves weekly", "• Replace worn conveyor belts", "• Log every pressure test"]) {
    text(item, 11);
    y -= 15;
  }
  y -= 12;
  for (const kv of ["Site: North Quarry", "Inspector: J. Alvarez"]) {
    text(kv, 11);
    y -= 15;
  }
  y -= 14;
  const rows = [
    ["Item", "Count", "Status"],
    ["Pumps", "12", "OK"],
    ["Valves", "48", "Replaced"],
    ["Belts", "7", "OK"],
  ];
  for (const row of rows) {
    row.forEach((cell, i) => text(cell, 11, font, 50 + i * 120));
    y -= 16;
  }
  const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: { r: 30, g: 120, b: 200 } } }).png().toBuffer();
  page.drawImage(await pdf.embedPng(png), REPORT_FIGURE);

  const page2 = pdf.addPage([A4.width, A4.height]);
  page2.drawText("2. Findings", { x: 50, y: 780, size: 16, font: bold });
  wrap(REPORT_FINDINGS, 90).forEach((line, i) => page2.drawText(line, { x: 50, y: 750 - i * 15, size: 11, font, color: rgb(0, 0, 0) }));
  return pdf.save();
}

/** A picture of printed text at 200 dpi (what a scanner makes), as PNG. */
export async function scanImage(lines: string[], width = 1654, height = 1100): Promise<Buffer> {
  const rows = lines
    .map((line, i) => `<text x="120" y="${200 + i * 130}" font-family="DejaVu Sans" font-size="${i === 0 ? 64 : 48}" fill="black">${line}</text>`)
    .join("\n");
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="white"/>${rows}</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

export const SCAN_LINES = ["SCANNED MAINTENANCE LOG", "Pump P-12 overhauled on 3 March", "Seals replaced and pressure tested"];

/** A one-page PDF, `width` x `height` points, that is only the picture `png` (a scan: no text layer). */
export async function scanPdfOf(png: Buffer, [width, height]: [number, number]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.addPage([width, height]).drawImage(await pdf.embedPng(png), { x: 0, y: 0, width, height });
  return pdf.save();
}

/** A one-page PDF that is only the given 200 dpi picture (1700 x 1100 px: a 612 x 396 pt page). */
async function scanOf(svgBody: string): Promise<Uint8Array> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1700" height="1100"><rect width="100%" height="100%" fill="white"/>${svgBody}</svg>`;
  return scanPdfOf(await sharp(Buffer.from(svg)).png().toBuffer(), [612, 396]);
}

const svgLine = (text: string, x: number, y: number) => `<text x="${x}" y="${y}" font-family="DejaVu Sans" font-size="30" fill="black">${text}</text>`;

export const SCAN_LEFT_COLUMN = ["The pump station was inspected on Monday", "by the night crew after the storm. They", "found the north valve leaking slowly and", "replaced its gasket before the morning.", "No other damage was reported that week", "and the station went back into service."];
export const SCAN_RIGHT_COLUMN = ["Budget notes for the coming quarter", "show higher costs for spare parts and", "overtime, offset by lower fuel prices.", "The board will review the figures in", "its January meeting at the town hall."];
/** The words drawn inside the diagram. */
export const SCAN_DIAGRAM_LABELS = ["Symbol", "g(m)", "e(jwm)"];

/**
 * A scanned two-column page whose right column holds a block diagram (boxes, arrows, a dashed
 * frame, small labels) beside the left column's lines, its text below it.
 */
export function scannedColumnsBesideDiagram(): Promise<Uint8Array> {
  const diagram = `<g stroke="black" fill="none" stroke-width="3"><rect x="910" y="200" width="160" height="70"/><rect x="1140" y="200" width="90" height="70"/><rect x="1300" y="200" width="170" height="70"/><circle cx="1555" cy="235" r="35"/><path d="M1070 235 H1140 M1230 235 H1300 M1470 235 H1520 M1590 235 H1650"/><rect x="895" y="180" width="770" height="185" stroke-dasharray="9 6"/><rect x="1410" y="305" width="100" height="42"/></g><text x="925" y="245" font-size="23" font-family="DejaVu Sans">${SCAN_DIAGRAM_LABELS[0]}</text><text x="1315" y="245" font-size="26" font-style="italic" font-family="DejaVu Serif">${SCAN_DIAGRAM_LABELS[1]}</text><text x="1420" y="335" font-size="23" font-family="DejaVu Sans">${SCAN_DIAGRAM_LABELS[2]}</text>`;
  const left = SCAN_LEFT_COLUMN.map((t, i) => svgLine(t, 90, 215 + i * 48));
  const right = SCAN_RIGHT_COLUMN.map((t, i) => svgLine(t, 910, 470 + i * 64));
  return scanOf(diagram + left.join("") + right.join(""));
}

export const SCAN_LIST_ITEMS = ["Inspect the valves every week", "Replace worn conveyor belts", "Log every pressure test"];

/** A scanned page with a list whose bullets are drawn dots (no glyph for OCR to read) between two paragraphs. */
export function scannedBulletList(): Promise<Uint8Array> {
  // A bullet 0.5 em across, its centre 0.3 em over the baseline, 0.9 em before the item's text.
  const items = SCAN_LIST_ITEMS.flatMap((text, i) => [`<circle cx="138" cy="${346 + i * 56}" r="8" fill="black"/>`, svgLine(text, 165, 355 + i * 56)]);
  const before = svgLine("The crew follows these rules on every shift at the quarry.", 110, 280);
  const after = svgLine("Any fault found is reported to the site office the same day.", 110, 355 + 3 * 56 + 24);
  return scanOf(before + items.join("") + after);
}

/** One page that is only a picture of text (a scan): no text layer at all. */
export async function scannedPdf(): Promise<Uint8Array> {
  return scanPdfOf(await scanImage(SCAN_LINES), [595, 396]);
}

/** A text page followed by a scanned page: for checking that a failing scan fails only its page. */
export async function mixedPdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const first = pdf.addPage([A4.width, A4.height]);
  first.drawText("Cover page with a real text layer.", { x: 50, y: 780, size: 12, font });
  const scan = pdf.addPage([595, 396]);
  scan.drawImage(await pdf.embedPng(await scanImage(SCAN_LINES)), { x: 0, y: 0, width: 595, height: 396 });
  return pdf.save();
}

/** Looks like a PDF by its first bytes, but its body is garbage. */
export function corruptPdf(): Uint8Array {
  const head = new TextEncoder().encode("%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\n");
  const bytes = new Uint8Array(2048);
  bytes.set(head);
  for (let i = head.length; i < bytes.length; i++) bytes[i] = (i * 131) % 251;
  return bytes;
}

/** A real PDF cut off half way. */
export async function truncatedPdf(): Promise<Uint8Array> {
  const bytes = await reportPdf();
  return bytes.slice(0, Math.floor(bytes.length / 3));
}

/**
 * A minimal PDF protected by a user password (Standard security handler, RC4 40-bit). Its /U entry
 * matches no password, so no reader can open it without one: it asks for a password.
 */
export function encryptedPdf(): Uint8Array {
  const hex = (seed: number) => Array.from({ length: 32 }, (_, i) => ((i * 37 + seed) % 256).toString(16).padStart(2, "0")).join("");
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
    `<< /Filter /Standard /V 1 /R 2 /O <${hex(11)}> /U <${hex(99)}> /P -44 >>`,
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  const id = hex(5).slice(0, 32);
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Encrypt 4 0 R /ID [<${id}> <${id}>] >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}

/**
 * A DOCX report: Title, Heading 1 and Heading 2 paragraphs, body paragraphs, a bulleted and a
 * numbered list, two "Label: value" paragraphs, a 3x3 table and a picture with alt text.
 */
export async function reportDocx(): Promise<Uint8Array> {
  const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] });
  const png = await sharp({ create: { width: 120, height: 80, channels: 3, background: { r: 200, g: 60, b: 40 } } }).png().toBuffer();
  const doc = new Document({
    title: "Quarterly Operations Review",
    creator: "Site Engineering",
    numbering: {
      config: [
        { reference: "bullets", levels: [{ level: 0, format: LevelFormat.BULLET, text: "•", alignment: AlignmentType.LEFT }] },
        { reference: "steps", levels: [{ level: 0, format: LevelFormat.DECIMAL, text: "%1.", alignment: AlignmentType.LEFT }] },
      ],
    },
    sections: [
      {
        children: [
          new Paragraph({ text: "Quarterly Operations Review", heading: HeadingLevel.TITLE }),
          new Paragraph({ text: "Summary", heading: HeadingLevel.HEADING_1 }),
          new Paragraph({ children: [new TextRun("The quarter closed with all crushers running and "), new TextRun({ text: "no lost-time incidents", bold: true }), new TextRun(" at either site.")] }),
          new Paragraph({ text: "Maintenance", heading: HeadingLevel.HEADING_2 }),
          new Paragraph({ text: "Gearbox G-220 rebuilt", numbering: { reference: "bullets", level: 0 } }),
          new Paragraph({ text: "Screens re-tensioned", numbering: { reference: "bullets", level: 0 } }),
          new Paragraph({ text: "Dust filters changed", numbering: { reference: "bullets", level: 0 } }),
          new Paragraph({ text: "Next steps", heading: HeadingLevel.HEADING_2 }),
          new Paragraph({ text: "Order spare bearings", numbering: { reference: "steps", level: 0 } }),
          new Paragraph({ text: "Schedule the audit", numbering: { reference: "steps", level: 0 } }),
          new Paragraph("Owner: Site Engineering"),
          new Paragraph("Review date: 30 June"),
          new Table({
            rows: [
              new TableRow({ children: [cell("Asset"), cell("Hours"), cell("State")] }),
              new TableRow({ children: [cell("Crusher"), cell("410"), cell("Running")] }),
              new TableRow({ children: [cell("Conveyor"), cell("388"), cell("Running")] }),
            ],
          }),
          new Paragraph({ children: [new ImageRun({ type: "png", data: png, transformation: { width: 120, height: 80 }, altText: { name: "chart", description: "Uptime chart", title: "Uptime" } })] }),
        ],
      },
    ],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}

export function sampleMd(): string {
  return [
    "# Pump Handbook",
    "",
    "Centrifugal pumps move water out of the **quarry floor** after heavy rain. See [the manual](https://example.com/manual) and run `pumpctl status`.",
    "",
    "## Checks",
    "",
    "- Listen for cavitation",
    "- Check the seal for drips",
    "  and wipe it dry",
    "- Record the flow",
    "",
    "1. Stop the pump",
    "2. Close the valve",
    "",
    "| Pump | Flow | Head |",
    "|:-----|-----:|------|",
    "| P-12 | 40 m3/h | 30 m |",
    "| P-14 | 25 m3/h | 18 m |",
    "",
    "```sh",
    "pumpctl reset --all",
    "```",
    "",
    "![Pump cross-section](img/pump.png)",
    "",
    "\f# Appendix",
    "",
    "Setext Heading",
    "--------------",
    "",
    "Serial: PX-99812",
    "Rated: 40 m3/h",
    "",
  ].join("\n");
}

export function sampleTxt(): string {
  return [
    "SITE NOTES",
    "",
    "The haul road was graded on Monday and the dust suppression sprays were serviced.",
    "",
    "Shift lead: R. Okafor",
    "Weather: dry",
    "",
    "- refuel the loader",
    "- inspect the tyres",
    "  on both axles",
    "",
    "\fDaily Checklist",
    "===============",
    "",
    "1. Walk the bench edges",
    "2. Test the radios",
    "",
    "Truck    Loads    Tonnes",
    "T-01     14       560",
    "T-02     11       440",
    "",
  ].join("\n");
}

export const COLUMN_TEXT = {
  left: "Left column prose about the crusher maintenance schedule that continues for several lines so that the page reads as two columns of running text rather than a table of short cells.",
  right: "Right column prose about the conveyor belt replacement programme which also runs for several lines and is placed next to the left column on the same baselines.",
};

/** An A4 page with a full-width heading over two columns of prose that share baselines. */
export async function twoColumnPdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const page = pdf.addPage([A4.width, A4.height]);
  page.drawText("Two Column Bulletin", { x: 50, y: 790, size: 20, font: bold });
  const left = [...wrap(COLUMN_TEXT.left, 42), ...wrap(COLUMN_TEXT.left, 42)];
  const right = [...wrap(COLUMN_TEXT.right, 42), ...wrap(COLUMN_TEXT.right, 42)];
  left.forEach((line, i) => page.drawText(line, { x: 50, y: 750 - i * 14, size: 10, font }));
  right.forEach((line, i) => page.drawText(line, { x: 315, y: 750 - i * 14, size: 10, font }));
  return pdf.save();
}
