import { describe, expect, test } from "bun:test";
import Ajv from "ajv";
import { fillSchema, parseNumber, type Evidence } from "../src/images/schema-fill.ts";
import { schemaProblems } from "../src/custom-schemas/schema-rules.ts";

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });

/** The schema without `required`: what fillSchema promises to satisfy (unfilled fields are listed instead). */
function withoutRequired(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutRequired);
  if (typeof node !== "object" || node === null) return node;
  return Object.fromEntries(Object.entries(node).filter(([k]) => k !== "required").map(([k, v]) => [k, withoutRequired(v)]));
}

function expectValid(schema: object, value: unknown) {
  const validate = ajv.compile(schema);
  const ok = validate(value);
  expect(validate.errors ?? []).toEqual([]);
  expect(ok).toBe(true);
}

const evidence = (over: Partial<Evidence> = {}): Evidence => ({
  description: null,
  tags: [],
  objects: [],
  faces: 0,
  ocrText: "",
  ocrLines: [],
  width: 1200,
  height: 1600,
  format: "jpeg",
  takenAt: null,
  ...over,
});

const INVOICE_LINES = [
  "ACME Ltd",
  "Invoice number: INV-0042   Date: 2024-01-05",
  "Seller name: ACME Ltd",
  "Buyer name: Bob Smith",
  "Qty 3",
  "Subtotal: 1,000.00",
  "Total tax: 250.00",
  "Total: USD 1,250.00",
  "Paid: yes",
];
const invoiceEvidence = evidence({
  description: "A scanned invoice lying on a desk",
  tags: ["document", "indoors"],
  objects: [
    { label: "laptop", score: 0.71, box: { x_min: 0.1, y_min: 0.2, x_max: 0.5, y_max: 0.6 } },
    { label: "person", score: 0.93 },
  ],
  faces: 1,
  ocrLines: INVOICE_LINES,
  ocrText: INVOICE_LINES.join("\n"),
  takenAt: "2024-01-06T09:30:00.000Z",
});

const INVOICE_SCHEMA = {
  type: "object",
  description: "An invoice photo",
  properties: {
    invoice_number: { type: "string", description: "Invoice number" },
    total: { type: "number", minimum: 0 },
    subtotal: { type: "number" },
    quantity: { type: "integer" },
    currency: { type: "string", enum: ["EUR", "USD", "GBP"] },
    paid: { type: "boolean" },
    has_person: { type: "boolean" },
    contains_car: { type: "boolean" },
    is_indoors: { type: "boolean" },
    tags: { type: "array", items: { type: "string" } },
    objects: {
      type: "array",
      items: {
        type: "object",
        properties: {
          label: { type: "string" },
          confidence: { type: "number" },
          bbox: { type: "object", properties: { x_min: { type: "number" }, y_min: { type: "number" }, x_max: { type: "number" }, y_max: { type: "number" } } },
        },
        required: ["label"],
      },
    },
    image: { type: "object", properties: { width: { type: "integer" }, height: { type: "integer" }, format: { type: "string" }, taken_at: { type: "string", format: "date-time" } } },
    seller: { type: "object", properties: { name: { type: "string" }, vat_id: { type: "string" } }, required: ["name", "vat_id"] },
    buyer: { type: "object", properties: { address: { type: "string" } } },
    due_date: { type: "string", format: "date" },
  },
  required: ["invoice_number", "total", "due_date"],
};

describe("fillSchema", () => {
  test("the test schemas are valid custom extraction schemas", () => {
    expect(schemaProblems(INVOICE_SCHEMA)).toEqual([]);
    expect(schemaProblems(LISTING_SCHEMA)).toEqual([]);
  });

  test("fills every kind of property from crafted invoice evidence", () => {
    const result = fillSchema(INVOICE_SCHEMA, invoiceEvidence);
    expect(result.value).toEqual({
      invoice_number: "INV-0042",
      total: 1250,
      subtotal: 1000,
      quantity: 3,
      currency: "USD",
      paid: true,
      has_person: true, // a face and a detected person
      contains_car: false, // a has_/contains_ name whose subject was not detected
      is_indoors: true,
      tags: ["document", "indoors"],
      objects: [
        { label: "laptop", confidence: 0.71, bbox: { x_min: 0.1, y_min: 0.2, x_max: 0.5, y_max: 0.6 } },
        { label: "person", confidence: 0.93 },
      ],
      image: { width: 1200, height: 1600, format: "jpeg", taken_at: "2024-01-06T09:30:00.000Z" },
      seller: { name: "ACME Ltd" }, // "Seller name", not "Buyer name"
    });
    expect(result.filled).toEqual([
      "invoice_number", "total", "subtotal", "quantity", "currency", "paid", "has_person", "contains_car", "is_indoors",
      "tags", "objects", "image.width", "image.height", "image.format", "image.taken_at", "seller.name",
    ]);
    expect(result.unfilled).toEqual(["seller.vat_id", "buyer.address", "due_date"]);
    expectValid(withoutRequired(INVOICE_SCHEMA) as object, result.value);
  });

  test("when everything required is found, the value validates against the full schema", () => {
    const properties = { ...INVOICE_SCHEMA.properties, seller: { ...INVOICE_SCHEMA.properties.seller, required: ["name"] } };
    const schema = { ...INVOICE_SCHEMA, properties, required: ["invoice_number", "total", "objects", "seller"] };
    expectValid(schema, fillSchema(schema, invoiceEvidence).value);
  });

  test("no evidence: everything unfilled, non-nullable fields left out", () => {
    const result = fillSchema(INVOICE_SCHEMA, evidence({ width: 0, height: 0, format: null }));
    expect(result.value).toEqual({ contains_car: false, has_person: false, is_indoors: false, image: { width: 0, height: 0 } });
    expect(result.unfilled).toContain("invoice_number");
    expect(result.unfilled).toContain("tags");
    expect(result.unfilled).toContain("objects");
    expect(result.unfilled).toContain("paid");
    expect(result.unfilled).not.toContain("has_person");
  });

  test("nullable fields are written as null and still listed as unfilled", () => {
    const schema = {
      type: "object",
      properties: {
        title: { type: ["string", "null"] },
        price: { anyOf: [{ type: "number" }, { type: "null" }] },
        agent: { anyOf: [{ type: "object", properties: { phone: { type: "string" } } }, { type: "null" }] },
        note: { type: "string" },
      },
    };
    const result = fillSchema(schema, evidence({ ocrLines: ["Price: 450,000"] }));
    expect(result.value).toEqual({ title: null, price: 450000, agent: null });
    expect(result.filled).toEqual(["price"]);
    expect(result.unfilled).toEqual(["title", "agent", "note"]);
    expectValid(schema, result.value);
  });
});

const LISTING_SCHEMA = {
  type: "object",
  properties: {
    property_type: { type: "string", enum: ["house", "condo", "land"] },
    style: { type: "string", enum: ["modern", "victorian"] },
    has_pool: { type: "boolean", description: "Whether a swimming pool is visible" },
    pool: { type: "boolean" },
    garage: { type: "boolean" },
    has_vehicle: { type: "boolean" },
    has_people: { type: "boolean" },
    fireplace: { type: "boolean", description: "Fireplace" },
    amenities: { type: "array", items: { type: "string", enum: ["pool", "garage", "garden", "sauna"] } },
    keywords: { type: "array", items: { type: "string" }, maxItems: 2 },
    detected_objects: { type: "array", items: { type: "string" } },
    lines: { type: "array", items: { type: "string" } },
    colours: { type: "array", items: { type: "string" } },
    main_color: { type: "string" },
    face_count: { type: "integer" },
    bedrooms: { type: "integer", minimum: 0, maximum: 50, description: "Beds" },
    baths: { type: "number" },
    garages: { type: "integer", description: "Number of garage spaces" },
    mls_number: { type: "string", pattern: "^MLS-\\d+$" },
    listing_id: { type: "string" },
    agent_phone: { type: "string", maxLength: 20 },
    text_regions: { type: "array", items: { type: "object", properties: { text: { type: "string" } } } },
    rooms: { type: "array", items: { type: "object", properties: { name: { type: "string" }, area: { type: "number" } }, required: ["area"] } },
  },
};

const LISTING_LINES = ["MLS# MLS-88123", "Beds: 4  Baths: 2.5  Number of garage spaces: 2", "Agent phone: +1 555 0100 ext. 12345678", "Sauna and garden included"];
const listingEvidence = evidence({
  description: "A modern house with a swimming pool and a red car in the driveway",
  tags: ["house", "swimming pool", "outdoor", "garden"],
  objects: [
    { label: "car", score: 0.88 },
    { label: "potted plant", score: 0.6 },
    { label: "car", score: 0.5 },
  ],
  ocrLines: LISTING_LINES,
  ocrText: LISTING_LINES.join("\n"),
  dominantColours: ["#ffffff", "#336699", "#aa3322"],
});

describe("fillSchema: enums, booleans and arrays", () => {
  test("a listing photo", () => {
    const result = fillSchema(LISTING_SCHEMA, listingEvidence);
    expect(result.value).toEqual({
      property_type: "house", // a tag
      style: "modern", // only in the description
      has_pool: true, // "swimming pool" tag
      pool: true,
      has_vehicle: true, // a car is a vehicle
      has_people: false,
      amenities: ["pool", "garage", "garden", "sauna"], // tags and OCR
      keywords: ["house", "swimming pool"], // tags, cut to maxItems
      detected_objects: ["car", "potted plant"], // distinct labels
      lines: LISTING_LINES,
      colours: ["#ffffff", "#336699", "#aa3322"],
      main_color: "#ffffff",
      face_count: 0,
      bedrooms: 4, // labelled by its description, "Beds"
      baths: 2.5, // the second column of "Beds: 4  Baths: 2.5  …"
      garages: 2, // labelled by its description
      mls_number: "MLS-88123", // "MLS#" reads as "MLS number"
      text_regions: LISTING_LINES.map((text) => ({ text })),
    });
    // garage and fireplace (bare names) are not detected: unknown, not false. The phone is longer
    // than maxLength; nothing is labelled listing id; rooms cannot be mapped.
    expect(result.unfilled).toEqual(["garage", "fireplace", "listing_id", "agent_phone", "rooms"]);
    expectValid(LISTING_SCHEMA, result.value);
  });

  test("an enum named by two sources' values at one level passes to the next source", () => {
    const schema = { type: "object", properties: { property_type: { type: "string", enum: ["house", "condo", "land"] } } };
    const both = evidence({ tags: ["house", "condo"], description: "a condo building" });
    expect(fillSchema(schema, both).value).toEqual({ property_type: "condo" });
    const ambiguous = evidence({ tags: ["house", "condo"] });
    expect(fillSchema(schema, ambiguous)).toEqual({ value: {}, filled: [], unfilled: ["property_type"] });
    const labelled = evidence({ tags: ["house", "condo"], ocrLines: ["Property type: Land"] });
    expect(fillSchema(schema, labelled).value).toEqual({ property_type: "land" });
  });

  test("boolean labels in OCR win over detection", () => {
    const schema = { type: "object", properties: { has_pool: { type: "boolean" }, furnished: { type: "boolean" } } };
    const result = fillSchema(schema, evidence({ tags: ["pool"], ocrLines: ["Has pool: no", "Furnished: Yes"] }));
    expect(result.value).toEqual({ has_pool: false, furnished: true });
  });

  test("arrays of objects need a label to map and every element to satisfy the item schema", () => {
    const schema = {
      type: "object",
      properties: {
        items: { type: "array", items: { type: "object", properties: { class: { type: "string" }, score: { type: "number", minimum: 0.6 } }, required: ["class", "score"] } },
        entities: { type: "array", items: { type: "object", properties: { colour: { type: "string" } } } },
      },
    };
    const result = fillSchema(schema, listingEvidence);
    expect(result.value).toEqual({ items: [{ class: "car", score: 0.88 }, { class: "potted plant", score: 0.6 }] });
    expect(result.unfilled).toEqual(["entities"]);
    expectValid(schema, result.value);
  });

  test("nested objects read labels with their parent's name first", () => {
    const schema = {
      type: "object",
      properties: {
        buyer: { type: "object", properties: { name: { type: "string" } } },
        seller: { type: "object", properties: { name: { type: "string" } } },
        name: { type: "string" },
      },
    };
    const lines = ["Name: Invoice copy", "Buyer name: Bob Smith", "Seller name: ACME Ltd"];
    expect(fillSchema(schema, evidence({ ocrLines: lines })).value).toEqual({
      buyer: { name: "Bob Smith" },
      seller: { name: "ACME Ltd" },
      name: "Invoice copy",
    });
  });

  test("labels start a line or a column; 'No.' and '#' read as number", () => {
    const schema = {
      type: "object",
      properties: { invoice_number: { type: "string" }, order_number: { type: "string" }, date: { type: "string" }, total: { type: "number" } },
    };
    const lines = ["Invoice No.: 77-A", "Order #PO-991", "Ref: 1 | Date: 2024-03-01", "The total is 99"];
    const result = fillSchema(schema, evidence({ ocrLines: lines }));
    expect(result.value).toEqual({ invoice_number: "77-A", order_number: "PO-991", date: "2024-03-01" });
    expect(result.unfilled).toEqual(["total"]);
  });

  test("OCR text without lines is split into lines", () => {
    const schema = { type: "object", properties: { total: { type: "number" } } };
    expect(fillSchema(schema, evidence({ ocrText: "Receipt\nTotal: 12.50\n" })).value).toEqual({ total: 12.5 });
  });
});

describe("parseNumber", () => {
  test.each([
    ["1,250.00", 1250],
    ["$ 1,250", 1250],
    ["USD 1,250.00 due", 1250],
    ["1.250,00", 1250],
    ["1.250.000", 1250000],
    ["12,5", 12.5],
    ["(12.5)", -12.5],
    ["-7 EUR", -7],
    ["3 items", 3],
    ["42%", 42],
  ])("%s is %p", (text, expected) => {
    expect(parseNumber(text)).toBe(expected);
  });

  test.each(["INV-0042", "2024-01-05", "12:30", "3/4", "abc", "", "1,2,3"])("%p is not a number", (text) => {
    expect(parseNumber(text)).toBeNull();
  });
});
