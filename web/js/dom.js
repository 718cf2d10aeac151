// DOM helpers shared by the page modules: element lookup, table cells, the two-name spans, the phone test.

/**
 * The page's element of id `id`. Typed `any`: the page reads form controls, canvases and plain elements through it
 * (tsconfig.web.json type-checks the rest of each module).
 * @param {string} id
 * @returns {any}
 */
export const $ = (id) => document.getElementById(id);

export const isPhone = () => window.innerWidth < 600;

/** A canvas sized to its CSS box (width × height px) at the device's pixel ratio, cleared to white, 12 px text. */
export function canvas2d(canvas, width, height) {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, width, height);
  ctx.font = "12px system-ui, sans-serif";
  return ctx;
}

export function cell(tag, text, cls) {
  const c = document.createElement(tag);
  c.textContent = text;
  if (cls) c.className = cls;
  return c;
}
export const signClass = (x) => (x == null ? "" : x < 0 ? "neg" : x > 0 ? "pos" : "");

/** A full name and a short one; the stylesheet shows the short one at phone width (web/styles.css). */
export function twoNames(full, short) {
  const frag = document.createDocumentFragment();
  frag.append(cell("span", full, "name-full"), cell("span", short, "name-short"));
  return frag;
}
