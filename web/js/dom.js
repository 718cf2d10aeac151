// DOM helpers shared by the page modules: element lookup, table cells, the two-name spans, the phone test.

export const $ = (id) => document.getElementById(id);

export const isPhone = () => window.innerWidth < 600;

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
