/**
 * Placeholder for the PostgreSQL store backend. The real implementation replaces this file; the
 * signature is the contract src/store/backend.ts relies on (it imports this module only when DATABASE_URL is set).
 */
import type { StoreBackend } from "../types.js";

export async function openPostgresBackend(_url: string): Promise<StoreBackend> {
  throw new Error("PostgreSQL backend not built");
}
