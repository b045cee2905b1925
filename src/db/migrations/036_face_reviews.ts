// Whether a face's person was decided by a reviewer ("not this person" leaves it without one):
// analysing the file again finds its faces afresh and must not undo that decision (people.ts).
export default `
ALTER TABLE faces ADD COLUMN reviewed INTEGER NOT NULL DEFAULT 0;
`;
