/**
 * The importer lives in src/store/import/ (docs/data.md §3): this module keeps the historical import path
 * (`src/store/import.js`) working for the rest of the code base.
 */
export * from "./import/index.js";
