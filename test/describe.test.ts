/** The pure parts of image description: the rule-based category and CLIP's zero-shot choice. */
import { describe, expect, test } from "bun:test";
import { CATEGORY_PROMPTS, categorize, categoryFromSimilarities, composeDescription, type ImageFacts } from "../src/images/describe.ts";
import { CONTENT_CATEGORIES } from "../src/files/file-fields.ts";

const facts = (over: Partial<ImageFacts>): ImageFacts => ({ width: 800, height: 600, format: "jpeg", objects: [], faces: 0, ocrLines: [], colours: [], ...over });
const object = (label: string) => ({ label, score: 0.9 });

describe("categoryFromSimilarities", () => {
  const categories = Object.keys(CATEGORY_PROMPTS);
  const sims = (best: string, top: number, rest = 0.2) => categories.map((c) => (c === best ? top : rest));

  test("there is one prompt per spec category, in the spec's order", () => {
    expect(categories).toEqual([...CONTENT_CATEGORIES]);
  });

  test("a clear winner is chosen; a near tie stays general", () => {
    // 0.05 above the rest at CLIP's logit scale 100: e^5 ≈ 148 against 16 others.
    expect(categoryFromSimilarities(sims("map", 0.25))).toEqual({ category: "map", probability: expect.closeTo(0.903, 3) });
    // 0.01 above: e^1 ≈ 2.7 against 16 others is not a decision.
    const tie = categoryFromSimilarities(sims("map", 0.21));
    expect(tie.category).toBe("general");
    expect(tie.probability).toBeCloseTo(Math.E / (Math.E + 16), 5);
    expect(categoryFromSimilarities(sims("general", 0.3)).category).toBe("general");
  });
});

describe("categorize (rules, without CLIP or an endpoint)", () => {
  test("text-heavy images are documents, or screenshots when PNG", () => {
    const lines = Array.from({ length: 6 }, (_, i) => `line ${i} with several words of text`);
    expect(categorize(facts({ ocrLines: lines }))).toBe("document");
    expect(categorize(facts({ ocrLines: lines, format: "png" }))).toBe("screenshot");
  });

  test("two interior objects make real estate; one object on white is a product photo; otherwise general", () => {
    expect(categorize(facts({ objects: [object("bed"), object("chair")] }))).toBe("real_estate");
    expect(categorize(facts({ objects: [object("cup")], colours: ["white"] }))).toBe("product_photo");
    expect(categorize(facts({ objects: [object("car")], colours: ["white"] }))).toBe("general");
    expect(categorize(facts({}))).toBe("general");
  });
});

describe("composeDescription", () => {
  test("says how many people were counted, faces and bodies together", () => {
    // 12 faces seen, 3 more people seen only as bodies: "15 people", not the face count.
    expect(composeDescription(facts({ objects: [object("person")], faces: 12, people: 15 }))).toContain("showing 15 people");
    // Facts from before people were counted fall back to the face count.
    expect(composeDescription(facts({ objects: [object("person")], faces: 4 }))).toContain("showing 4 people");
    expect(composeDescription(facts({ objects: [object("person")], faces: 1, people: 1 }))).toContain("showing a person");
  });
});
