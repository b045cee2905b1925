/** Real documents made for the tests: PDFs (pdf-lib), a scanned PDF, DOCX (docx), Markdown and text. */
import { AlignmentType, Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from "docx";
import { PDFDocument, StandardFonts, rgb } from "pdf-lib";
import sharp from "sharp";

/** Where reportPdf draws its figure, in PDF points on an A4 page (595 x 842, origin bottom-left). */
export const REPORT_FIGURE = { x: 350, y: 150, width: 150, height: 100 };

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if ((line + " " + word).trim().length > width) {
      lines.push(line.trim());
      line = word;
    } else line += ` ${word}`;
  }
  if (line.trim()) lines.push(line.trim());
  return lines;
}

export async function reportPdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle("Annual Safety Report");
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const page = pdf.addPage([595, 842]);
  let y = 780;
  const text = (s: string, size: number, f = font, x = 50) => page.drawText(s, { x, y, size, font: f });
  text("Annual Safety Report", 24, bold);
  y -= 45;
  text("1. Introduction", 16, bold);
  y -= 28;
  const paragraphs = [
    "This report summarises the safety inspections carried out at the quarry during the year. Every conveyor, crusher and pump was inspected at least twice and the results are recorded below for the operations team.",
    "Inspections followed the company procedure for heavy equipment. Findings that need action are listed with their owners, and all of them were closed before the end of the reporting period.",
  ];
  for (const p of paragraphs) {
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
  const rows = [["Item", "Count", "Status"], ["Pumps", "12", "OK"], ["Valves", "48", "Replaced"], ["Belts", "7", "OK"]];
  for (const row of rows) {
    row.forEach((cell, i) => text(cell, 11, font, 50 + i * 120));
    y -= 16;
  }
  const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: { r: 30, g: 120, b: 200 } } }).png().toBuffer();
  const image = await pdf.embedPng(png);
  page.drawImage(image, REPORT_FIGURE);

  const page2 = pdf.addPage([595, 842]);
  page2.drawText("2. Findings", { x: 50, y: 780, size: 16, font: bold });
  const findings = "During the March inspection the main valve VX-4471 was replaced after a pressure test showed a slow leak at the flange. The replacement part was fitted by the maintenance crew and tested the same day.";
  wrap(findings, 90).forEach((line, i) => page2.drawText(line, { x: 50, y: 750 - i * 15, size: 11, font, color: rgb(0, 0, 0) }));
  return pdf.save();
}

/** One page that is only a picture of text (a scan): no text layer at all. */
export async function scannedPdf(): Promise<Uint8Array> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1654" height="1100">
    <rect width="100%" height="100%" fill="white"/>
    <text x="120" y="200" font-family="DejaVu Sans" font-size="64" fill="black">SCANNED MAINTENANCE LOG</text>
    <text x="120" y="360" font-family="DejaVu Sans" font-size="48" fill="black">Pump P-12 overhauled on 3 March</text>
    <text x="120" y="460" font-family="DejaVu Sans" font-size="48" fill="black">Seals replaced and pressure tested</text>
  </svg>`;
  const png = await sharp(Buffer.from(svg)).png().toBuffer();
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([595, 396]);
  page.drawImage(await pdf.embedPng(png), { x: 0, y: 0, width: 595, height: 396 });
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

export async function reportDocx(): Promise<Uint8Array> {
  const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] });
  const doc = new Document({
    numbering: {
      config: [{ reference: "bullets", levels: [{ level: 0, format: "bullet", text: "•", alignment: AlignmentType.LEFT }] }],
    },
    sections: [
      {
        children: [
          new Paragraph({ text: "Quarterly Operations Review", heading: HeadingLevel.HEADING_1 }),
          new Paragraph({ children: [new TextRun("The quarter closed with all crushers running and no lost-time incidents at either site.")] }),
          new Paragraph({ text: "Maintenance", heading: HeadingLevel.HEADING_2 }),
          new Paragraph({ text: "Gearbox G-220 rebuilt", numbering: { reference: "bullets", level: 0 } }),
          new Paragraph({ text: "Screens re-tensioned", numbering: { reference: "bullets", level: 0 } }),
          new Paragraph("Owner: Site Engineering"),
          new Table({ rows: [new TableRow({ children: [cell("Asset"), cell("Hours"), cell("State")] }), new TableRow({ children: [cell("Crusher"), cell("410"), cell("Running")] }), new TableRow({ children: [cell("Conveyor"), cell("388"), cell("Running")] })] }),
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
    "Centrifugal pumps move water out of the **quarry floor** after heavy rain.",
    "",
    "## Checks",
    "",
    "- Listen for cavitation",
    "- Check the seal for drips",
    "",
    "| Pump | Flow | Head |",
    "|---|---|---|",
    "| P-12 | 40 m3/h | 30 m |",
    "",
    "\f# Appendix",
    "",
    "Serial: PX-99812",
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
    "",
  ].join("\n");
}
