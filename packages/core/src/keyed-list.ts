/**
 * The source of `keyed(box, items, render, empty)` for the daemon's pages (the console, the pod's
 * panel: plain ES2020 in their inline scripts, so it is text here). It makes `box`'s children the
 * elements of `items` in their order, keeping in place the element of every item whose record did
 * not change: a refresh that replaced them all took a row from under the person's eyes and pointer
 * (a click whose press and release fall on either side of a redraw is lost, and the card read is
 * not the card answered). An item's key is its whole record (`JSON.stringify`), so a changed item
 * is drawn again by `render(item)`; `empty()` is drawn for no items. A page that changes a kept
 * element in place deletes its `dataset.key`, so the next refresh draws it again.
 */
export const KEYED_LIST_SCRIPT = `
function keyed(box, items, render, empty) {
  if (!items.length) return box.replaceChildren(empty());
  const old = new Map();
  for (const el of box.children) if (el.dataset.key !== undefined) old.set(el.dataset.key, el);
  const next = items.map((item) => {
    const key = JSON.stringify(item);
    const el = old.get(key) || render(item);
    el.dataset.key = key;
    return el;
  });
  for (const el of [...box.children]) if (!next.includes(el)) el.remove();
  next.forEach((el, i) => { if (box.children[i] !== el) box.insertBefore(el, box.children[i] || null); });
}
`;
