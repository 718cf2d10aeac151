/**
 * Security headers (@fastify/helmet) with a Content-Security-Policy that lets the web page and the API docs run their
 * own scripts and styles from this origin only (no CDN, no inline scripts, no framing).
 */
import helmet from "@fastify/helmet";
import type { FastifyInstance } from "fastify";

export const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  scriptSrcAttr: ["'none'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", "data:"],
  fontSrc: ["'self'", "data:"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  // The service usually runs on plain http (loopback): never ask the browser to upgrade its requests.
  upgradeInsecureRequests: null,
};

export async function installSecurityHeaders(app: FastifyInstance): Promise<void> {
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
    crossOriginEmbedderPolicy: false,
  });
}
