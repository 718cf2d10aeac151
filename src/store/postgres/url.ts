/** Showing a database URL safely: never with its password (docs/data.md §4). */

/** `url` with any password replaced by `***` (and left as is when it does not parse). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, "//$1:***@");
  }
}

/** One line for /v1/info: the database name only (no host, user or password). */
export function describeDatabase(url: string): string {
  let db = "";
  try {
    db = decodeURIComponent(new URL(url).pathname.replace(/^\//, ""));
  } catch {
    /* keep it anonymous */
  }
  return db ? `PostgreSQL price store (database ${db})` : "PostgreSQL price store";
}
