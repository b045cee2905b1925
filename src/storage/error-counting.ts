/**
 * A blob store that reports each failed operation (a throw or a rejected promise) by name before
 * passing the failure on unchanged: the metrics' blob store error counter, without the two
 * backends knowing about metrics.
 */
import type { BlobStore } from "./blob-store.ts";

export function countingErrors(store: BlobStore, onError: (operation: string) => void): BlobStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      const operation = String(property);
      return (...args: unknown[]) => {
        try {
          const result = value.apply(target, args);
          return result instanceof Promise
            ? result.catch((err: unknown) => {
                onError(operation);
                throw err;
              })
            : result;
        } catch (err) {
          onError(operation);
          throw err;
        }
      };
    },
  });
}
