import { describe, expect, test } from "bun:test";
import {
  COMPLIANCE_STANDARDS,
  complianceRulesMarkdown,
  evaluateCompliance,
  isKnownStandard,
  knownStandards,
  type ComplianceInput,
  type ComplianceResult,
} from "../src/compliance/compliance.ts";

const MB = 1024 * 1024;
const box = { x_min: 0.1, y_min: 0.1, x_max: 0.3, y_max: 0.15 };

/** A photo that passes every rule of every standard's main image unless a test changes it. */
const photo = (over: Partial<ComplianceInput> = {}): ComplianceInput => ({
  standard: "reso",
  type: "mls",
  width: 2400,
  height: 1600,
  sizeBytes: 2 * MB,
  format: "jpeg",
  ocrRegions: [],
  borderMeanRgb: [252, 253, 251],
  borderStdDev: 2,
  ...over,
});

const check = (result: ComplianceResult, rule: string) => {
  const found = result.checks.find((c) => c.rule === rule);
  if (!found) throw new Error(`no check ${rule} in ${result.checks.map((c) => c.rule).join(", ")}`);
  return found;
};

describe("standards registry", () => {
  test("known standards per type, case-insensitive lookup", () => {
    expect(knownStandards("mls")).toEqual(["reso", "crmls", "bright"]);
    expect(knownStandards("marketplace")).toEqual(["amazon", "ebay", "etsy", "shopify", "generic"]);
    expect(knownStandards("other")).toEqual([]);
    expect(isKnownStandard("mls", "CRMLS")).toBe(true);
    expect(isKnownStandard("mls", " reso ")).toBe(true);
    expect(isKnownStandard("mls", "amazon")).toBe(false); // a marketplace, not an MLS
    expect(isKnownStandard("marketplace", "nope")).toBe(false);
  });

  test("evaluating an unknown standard throws, naming the known ones", () => {
    expect(() => evaluateCompliance(photo({ standard: "zillow" }))).toThrow(/unknown mls compliance standard "zillow" \(known: reso, crmls, bright\)/);
  });

  test("rule ids are unique per standard and image type", () => {
    for (const s of COMPLIANCE_STANDARDS) {
      for (const imageType of ["main", "secondary"] as const) {
        const ids = s.rules.filter((r) => r.appliesTo.includes(imageType)).map((r) => r.id);
        expect(new Set(ids).size).toBe(ids.length);
      }
    }
  });

  test("the documented table (docs/images.md) lists every standard and its rules", () => {
    const md = complianceRulesMarkdown();
    for (const s of COMPLIANCE_STANDARDS) expect(md).toContain(`| \`${s.type}\` | \`${s.id}\` |`);
    expect(md).toContain("at least 1280x960 px (either orientation) (main photo only)");
    expect(md).toContain("longest side at least 1600 px (all photos, recommended)");
  });

  test("a clean photo passes every standard as main and secondary", () => {
    for (const s of COMPLIANCE_STANDARDS) {
      for (const imageType of ["main", "secondary"] as const) {
        // Shopify caps at 20 MP and recommends 2048 px squares; Etsy recommends 2000 px: recommendations never fail.
        const result = evaluateCompliance(photo({ type: s.type, standard: s.id, imageType }));
        expect({ s: s.id, imageType, status: result.status }).toEqual({ s: s.id, imageType, status: "pass" });
      }
    }
  });
});

describe("rules", () => {
  test("min_dimensions ignores orientation and names the threshold", () => {
    const ok = evaluateCompliance(photo({ width: 768, height: 1024, imageType: "secondary" }));
    expect(check(ok, "min_dimensions").passed).toBe(true);
    const small = evaluateCompliance(photo({ width: 1000, height: 700 }));
    expect(small.status).toBe("fail");
    expect(check(small, "min_dimensions")).toMatchObject({
      passed: false,
      level: "required",
      measured: { width: 1000, height: 700 },
      required: { long: 1024, short: 768 },
      detail: "1000x700 px; needs at least 1024x768 px",
    });
  });

  test("aspect ratio 1.2-1.8 (long:short)", () => {
    expect(check(evaluateCompliance(photo({ width: 1600, height: 1200 })), "aspect_ratio").passed).toBe(true); // 4:3
    expect(check(evaluateCompliance(photo({ width: 1920, height: 1080 })), "aspect_ratio").passed).toBe(true); // 16:9
    const pano = check(evaluateCompliance(photo({ width: 4000, height: 1000 })), "aspect_ratio");
    expect(pano).toMatchObject({ passed: false, measured: 4 });
    const square = check(evaluateCompliance(photo({ width: 1200, height: 1200 })), "aspect_ratio");
    expect(square).toMatchObject({ passed: false, measured: 1 });
  });

  test("max file size", () => {
    expect(check(evaluateCompliance(photo({ sizeBytes: 25 * MB })), "max_file_size").passed).toBe(true);
    const big = check(evaluateCompliance(photo({ sizeBytes: 25 * MB + 1 })), "max_file_size");
    expect(big).toMatchObject({ passed: false, measured: 25 * MB + 1, required: { max: 25 * MB } });
    expect(big.detail).toContain("at most 25 MB allowed");
  });

  test("format accepts aliases and MIME types, refuses others and unknown", () => {
    for (const format of ["jpg", "JPEG", "image/jpeg", "png"]) {
      expect(check(evaluateCompliance(photo({ format })), "format").passed).toBe(true);
    }
    expect(check(evaluateCompliance(photo({ format: "webp" })), "format")).toMatchObject({ passed: false, measured: "webp" });
    expect(check(evaluateCompliance(photo({ format: null })), "format")).toMatchObject({ passed: false, detail: "format unknown; must be one of jpeg, png" });
    const amazonTiff = evaluateCompliance(photo({ type: "marketplace", standard: "amazon", format: "tif" }));
    expect(check(amazonTiff, "format").passed).toBe(true);
  });

  test("no_text_overlay reports the texts; short fragments are noise", () => {
    const noise = evaluateCompliance(photo({ ocrRegions: [{ text: "A1", bounding_box: box }, { text: " -- ", bounding_box: box }] }));
    expect(check(noise, "no_text_overlay").passed).toBe(true);
    const marked = evaluateCompliance(photo({ ocrRegions: [{ text: "© Acme Realty", bounding_box: box }, { text: "ok", bounding_box: box }] }));
    expect(marked.status).toBe("fail");
    expect(check(marked, "no_text_overlay")).toMatchObject({
      passed: false,
      measured: ["© Acme Realty"],
      detail: 'text found on the photo (overlay or watermark): "© Acme Realty"',
    });
  });

  test("landscape applies to the MLS main photo only", () => {
    const portrait = { width: 1600, height: 2400 };
    const main = evaluateCompliance(photo({ ...portrait, imageType: "main" }));
    expect(check(main, "landscape").passed).toBe(false);
    expect(main.status).toBe("fail");
    const secondary = evaluateCompliance(photo({ ...portrait, imageType: "secondary" }));
    expect(secondary.checks.map((c) => c.rule)).not.toContain("landscape");
    expect(secondary.status).toBe("pass");
  });

  test("white background: near-white passes, off-white, uneven or unmeasured fails", () => {
    const amazon = (over: Partial<ComplianceInput>) =>
      check(evaluateCompliance(photo({ type: "marketplace", standard: "amazon", ...over })), "white_background");
    expect(amazon({}).passed).toBe(true);
    expect(amazon({ borderMeanRgb: [250, 250, 230] })).toMatchObject({ passed: false, measured: { mean_rgb: [250, 250, 230], std_dev: 2 } });
    expect(amazon({ borderStdDev: 30 }).detail).toContain("uneven");
    expect(amazon({ borderMeanRgb: undefined })).toMatchObject({ passed: false, detail: "background colour was not measured" });
  });

  test("min_longest_side, min_width and max_megapixels", () => {
    const ebay = evaluateCompliance(photo({ type: "marketplace", standard: "ebay", width: 400, height: 300 }));
    expect(check(ebay, "min_longest_side")).toMatchObject({ passed: false, measured: 400, required: { min: 500 } });
    const etsy = evaluateCompliance(photo({ type: "marketplace", standard: "etsy", width: 600, height: 900 }));
    expect(check(etsy, "min_width")).toMatchObject({ passed: false, measured: 600 });
    const shopify = evaluateCompliance(photo({ type: "marketplace", standard: "shopify", width: 6000, height: 4000 }));
    expect(check(shopify, "max_megapixels")).toMatchObject({ passed: false, measured: 24 });
  });

  test("recommended rules are reported but never fail the image", () => {
    const result = evaluateCompliance(photo({ type: "marketplace", standard: "ebay", width: 1200, height: 900 }));
    expect(check(result, "recommended_longest_side")).toMatchObject({ passed: false, level: "recommended" });
    expect(result.status).toBe("pass");
  });
});

describe("main vs secondary", () => {
  test("CRMLS: 1280x960 for the main photo, 640x480 for the others", () => {
    const input = photo({ standard: "crmls", width: 1024, height: 768 });
    const main = evaluateCompliance({ ...input, imageType: "main" });
    expect(main).toMatchObject({ standard: "crmls", type: "mls", image_type: "main", status: "fail" });
    expect(check(main, "min_dimensions").required).toEqual({ long: 1280, short: 960 });
    const secondary = evaluateCompliance({ ...input, imageType: "secondary" });
    expect(secondary.status).toBe("pass");
    expect(check(secondary, "min_dimensions").required).toEqual({ long: 640, short: 480 });
  });

  test("Amazon: text and background rules only on the main image; main is the default", () => {
    const input = photo({
      type: "marketplace",
      standard: "Amazon",
      width: 800,
      height: 800,
      borderMeanRgb: [120, 130, 140],
      ocrRegions: [{ text: "50% OFF", bounding_box: box }],
    });
    const main = evaluateCompliance(input);
    expect(main.image_type).toBe("main");
    expect(main.standard).toBe("amazon");
    expect(main.checks.filter((c) => !c.passed).map((c) => c.rule).sort()).toEqual(["min_longest_side", "no_text_overlay", "white_background"]);
    const secondary = evaluateCompliance({ ...input, imageType: "secondary" });
    expect(secondary.status).toBe("pass");
    expect(secondary.checks.map((c) => c.rule)).toEqual(["min_longest_side", "max_file_size", "format"]);
  });
});
