/**
 * Faces into people, by the cosine of their faceres embeddings (unit vectors). Two steps, as
 * Immich does it: a new face joins the person of its nearest face when that face is at least
 * SAME_PERSON similar (incremental, at ingest); faces left over are clustered among themselves
 * by a periodic job, DBSCAN-style: a face with at least MIN_FACES - 1 others that similar is a
 * core, and cores that similar to each other, with the faces they reach, form one new person.
 * Two faces of one photo are never the same person. Thresholds are set on bench:people's tuning
 * half and checked on its held-out half (docs/photos.md).
 */

export interface ClusterRule {
  /** Cosine at or above which two faces are the same person. */
  samePerson: number;
  /** Faces a new person needs (counting the core itself). */
  minFaces: number;
}

export const CLUSTERING: ClusterRule = { samePerson: 0.75, minFaces: 2 };

export interface FaceNeighbour {
  faceId: string;
  fileId: string;
  personId: string | null;
  similarity: number;
}

/**
 * The person a new face joins: that of its most similar face from another photo, when that face
 * has a person and is similar enough; else null (the face waits for the clustering job).
 */
export function personFor(fileId: string, neighbours: FaceNeighbour[], rule: ClusterRule = CLUSTERING): string | null {
  const best = neighbours.filter((n) => n.fileId !== fileId && n.similarity >= rule.samePerson).sort((a, b) => b.similarity - a.similarity)[0];
  return best?.personId ?? null;
}

export interface ClusterFace {
  id: string;
  fileId: string;
  vector: Float32Array;
}

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
};

/**
 * DBSCAN over the faces with similarity >= rule.samePerson as the neighbourhood: clusters of at
 * least rule.minFaces faces (face ids), largest first; faces in no cluster are left out. Faces of
 * one photo are not neighbours. O(n²) similarities: the job runs it over the unassigned faces only.
 */
export function clusterFaces(faces: ClusterFace[], rule: ClusterRule = CLUSTERING): string[][] {
  const neighbours: number[][] = faces.map(() => []);
  for (let i = 0; i < faces.length; i++) {
    for (let j = i + 1; j < faces.length; j++) {
      if (faces[i]!.fileId === faces[j]!.fileId) continue;
      if (cosine(faces[i]!.vector, faces[j]!.vector) >= rule.samePerson) {
        neighbours[i]!.push(j);
        neighbours[j]!.push(i);
      }
    }
  }
  const core = neighbours.map((n) => n.length + 1 >= rule.minFaces);
  const label = new Array<number>(faces.length).fill(-1);
  const clusters: number[][] = [];
  for (let i = 0; i < faces.length; i++) {
    if (!core[i] || label[i] !== -1) continue;
    const members: number[] = [];
    const queue = [i];
    label[i] = clusters.length;
    while (queue.length) {
      const at = queue.pop()!;
      members.push(at);
      if (!core[at]) continue; // a border face joins but does not extend the cluster
      for (const next of neighbours[at]!) {
        if (label[next] !== -1) continue;
        label[next] = clusters.length;
        queue.push(next);
      }
    }
    clusters.push(members);
  }
  return clusters
    .filter((members) => members.length >= rule.minFaces)
    .map((members) => members.map((i) => faces[i]!.id))
    .sort((a, b) => b.length - a.length);
}
