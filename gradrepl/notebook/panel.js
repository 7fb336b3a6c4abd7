// The gradrepl panel's view: a table of the rows (words computed in Python by the text views),
// a row's details on click, the notes, and the one-line footer. Re-drawn when the rows change.
function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "gradrepl-panel";
  el.appendChild(root);
  let selected = null;

  function cellText(text) {
    const td = document.createElement("td");
    td.textContent = text;
    return td;
  }

  function draw() {
    root.replaceChildren();
    const rows = model.get("rows") || [];
    const words = model.get("words") || {};
    const columns = model.get("columns") || {};
    const stale = new Set(model.get("stale") || []);
    if (!model.get("on")) {
      root.appendChild(Object.assign(document.createElement("div"), { textContent: "gradrepl panel off (%gradrepl on resumes it)" }));
    } else if (!rows.length) {
      root.appendChild(Object.assign(document.createElement("div"), { textContent: "(no live tensors)" }));
    } else {
      const table = document.createElement("table");
      const head = document.createElement("tr");
      for (const header of [...Object.values(columns), "cell"]) {
        head.appendChild(Object.assign(document.createElement("th"), { textContent: header }));
      }
      table.appendChild(document.createElement("thead")).appendChild(head);
      const body = table.appendChild(document.createElement("tbody"));
      for (const row of rows) {
        const tr = document.createElement("tr");
        tr.dataset.name = row.name;
        tr.classList.toggle("changed", !!row.changed);
        tr.classList.toggle("stale", stale.has(row.name));
        tr.classList.toggle("selected", row.name === selected);
        const said = words[row.name] || {};
        for (const key of Object.keys(columns)) tr.appendChild(cellText(said[key] ?? ""));
        const cell = cellText(`[${row.cell}]` + (stale.has(row.name) ? " stale" : ""));
        cell.className = "cell";
        tr.appendChild(cell);
        tr.addEventListener("click", () => { selected = selected === row.name ? null : row.name; draw(); });
        body.appendChild(tr);
        if (row.name === selected) {
          const details = document.createElement("td");
          details.colSpan = Object.keys(columns).length + 1;
          details.className = "details";
          details.textContent = said.details || "";
          body.appendChild(document.createElement("tr")).appendChild(details);
        }
      }
      root.appendChild(table);
    }
    const notes = model.get("notes") || [];
    if (notes.length) root.appendChild(Object.assign(document.createElement("div"), { className: "notes", textContent: notes.join("\n") }));
    root.appendChild(Object.assign(document.createElement("div"), { className: "footer", textContent: model.get("footer") }));
  }

  // One cell's changes (Panel.send_delta), applied to this view's copy of the state. Set on the model
  // without saving: the kernel holds the same, and sends it whole to a view that asks.
  model.on("msg:custom", (msg) => {
    const delta = msg && msg.delta;
    if (!delta) return;
    const gone = new Set(delta.removed);
    const fresh = new Map(delta.rows.map((row) => [row.name, row]));
    const unmarked = new Set(delta.unmarked);
    const rows = [];
    for (const row of model.get("rows") || []) {
      if (gone.has(row.name)) continue;
      if (fresh.has(row.name)) { rows.push(fresh.get(row.name)); fresh.delete(row.name); continue; }
      rows.push(unmarked.has(row.name) || row.changed ? { ...row, changed: false } : row);
    }
    rows.push(...fresh.values());
    const words = { ...(model.get("words") || {}), ...delta.words };
    for (const name of gone) if (!(name in delta.words)) delete words[name];  // removed, then made again
    model.set("words", words);
    model.set("stale", delta.stale);
    model.set("notes", delta.notes);
    model.set("rows", rows);
  });
  for (const name of ["rows", "words", "stale", "notes", "on"]) model.on(`change:${name}`, draw);
  draw();
  model.send({ event: "rendered" });

  // No one sees a collapsed output or a hidden tab: say so, so the kernel skips inspecting until seen.
  let visible = true;
  const tell = () => {
    const now = !document.hidden && el.getClientRects().length > 0;
    if (now !== visible) { visible = now; model.send({ event: "visible", visible: now }); }
  };
  const sizes = new ResizeObserver(tell);
  sizes.observe(el);
  document.addEventListener("visibilitychange", tell);
  return () => { sizes.disconnect(); document.removeEventListener("visibilitychange", tell); };
}

export default { render };
