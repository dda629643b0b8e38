// @ts-check
// Building the web console's page: elements by id, elements with text (always textContent, never
// HTML: every value comes from the server), table rows, and durations as the tables show them.

export const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** Makes an element with text content and attributes. */
export function el(tag, text, attributes) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attributes ?? {})) node.setAttribute(name, value);
  return node;
}

/** A table row of cells: nodes as they are, anything else as text. */
export function row(cells, attributes) {
  const tr = el('tr', null, attributes);
  for (const cell of cells) {
    const td = el('td');
    if (cell instanceof Node) td.append(cell);
    else td.textContent = cell ?? '';
    tr.append(td);
  }
  return tr;
}

/** `h:mm:ss` (or `m:ss`) since an ISO timestamp. */
export function duration(since) {
  const seconds = Math.max(0, Math.floor((Date.now() - Date.parse(since)) / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${h ? `${h}:` : ''}${String(m).padStart(h ? 2 : 1, '0')}:${String(s).padStart(2, '0')}`;
}
