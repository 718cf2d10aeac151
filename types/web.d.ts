// Globals of the page (web/) for its type check (tsconfig.web.json); the page itself is plain JavaScript.
declare global {
  interface Window {
    /** Exposed by web/app.js for debugging and the browser tests (read-only use). */
    folio: unknown;
  }
}
export {};
