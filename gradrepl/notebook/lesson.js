// A gradrepl lesson in a notebook: the steps so far, the open question with its answer box and
// Check / Hint / Skip, Next. Every word comes from Python (lesson_widget.py); prose arrives as HTML
// made by markdown-it with raw HTML off. A button sends {action, value}; the kernel grades.
function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "gradrepl-lesson";
  el.appendChild(root);

  const make = (tag, props = {}, children = []) => {
    const node = Object.assign(document.createElement(tag), props);
    for (const child of children) if (child) node.appendChild(child);
    return node;
  };
  const code = (text) => make("pre", { className: "code", textContent: text });
  const send = (action, value) => model.send({ action, value });
  const busy = () => !!model.get("busy");
  const button = (label, action, value) => {
    const b = make("button", { textContent: label, disabled: busy() });
    b.addEventListener("click", () => send(action, typeof value === "function" ? value() : value));
    return b;
  };

  function stepView(step) {
    const box = make("div", { className: `step step-${step.kind}` + (step.done ? " done" : "") });
    if (step.kind === "prose") box.appendChild(make("div", { className: "prose", innerHTML: step.html }));
    if (step.kind === "code") {
      box.appendChild(code(step.code));
      if (step.output) box.appendChild(make("pre", { className: "output", textContent: step.output }));
      if (!step.ran) {
        box.appendChild(make("div", { className: "row" }, [button("Run", "run"),
          make("span", { className: "how", textContent: step.how || "" })]));
      }
    }
    if (step.kind === "question") {
      box.appendChild(step.question ? questionView(step.question) : make("div", { className: "prompt", innerHTML: step.html }));
    }
    return box;
  }

  function questionView(q) {
    const box = make("div", { className: "question" });
    box.appendChild(make("div", { className: "prompt", innerHTML: q.prompt }));
    if (q.given) box.appendChild(code(q.given));
    if (q.code) box.appendChild(code(q.code));
    let read = () => "";
    if (!q.closed) {
      if (q.type === "choice") {
        const name = `choice-${q.id}-${Math.random()}`;
        const list = make("div", { className: "options" });
        for (const option of q.options) {
          const input = make("input", { type: "radio", name, value: String(option.n) });
          list.appendChild(make("label", {}, [input, document.createTextNode(` ${option.n}. ${option.text}`)]));
        }
        box.appendChild(list);
        read = () => { const on = list.querySelector("input:checked"); return on ? on.value : ""; };
      } else if (q.type === "predict_state") {
        const inputs = {};
        const grid = make("div", { className: "fields" });
        for (const field of q.fields) {
          inputs[field.name] = make("input", { type: "text", placeholder: field.placeholder });
          grid.appendChild(make("label", { textContent: field.label + " " }, [inputs[field.name]]));
        }
        box.appendChild(grid);
        read = () => Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, v.value]));
      } else if (q.type === "task") {
        const area = make("textarea", { rows: Math.max(3, (q.starter || "").split("\n").length + 1),
                                        value: q.starter || "", placeholder: q.placeholder, spellcheck: false });
        box.appendChild(area);
        read = () => area.value;
      } else {
        const input = make("input", { type: "text", placeholder: q.placeholder, className: "answer" });
        input.addEventListener("keydown", (e) => { if (e.key === "Enter") send("answer", input.value); });
        box.appendChild(input);
        read = () => input.value;
      }
      box.appendChild(make("div", { className: "how", textContent: q.how }));
      const row = make("div", { className: "row" }, [button("Check", "answer", () => read())]);
      if (q.type === "task") row.appendChild(button("Check my namespace", "check"));
      row.appendChild(button("Hint", "hint"));
      if (q.skippable) row.appendChild(button("Skip", "skip"));
      box.appendChild(row);
    }
    for (const [i, hint] of (q.hints || []).entries()) {
      box.appendChild(make("div", { className: "hint", textContent: `hint ${i + 1}: ${hint}` }));
    }
    if (q.said) box.appendChild(make("div", { className: "said", textContent: q.said }));
    if (q.output) box.appendChild(make("pre", { className: "output", textContent: q.output }));
    if (q.verdict) {
      const v = q.verdict;
      box.appendChild(make("div", { className: "verdict " + (v.correct ? "right" : "wrong") }, [
        make("b", { textContent: (v.correct ? "✓ " : "✗ ") + v.word + ". " }),
        document.createTextNode(v.feedback)]));
      if (v.fields) box.appendChild(make("div", { className: "how", textContent: v.fields }));
    }
    if (q.answer) box.appendChild(make("div", { className: "answer-shown" }, [
      document.createTextNode("answer: "), q.answer.includes("\n") ? code(q.answer) : make("code", { textContent: q.answer })]));
    return box;
  }

  function draw() {
    root.replaceChildren();
    root.appendChild(make("div", { className: "title", textContent: model.get("title") }));
    for (const step of model.get("steps") || []) {
      if (step.kind === "question" && !step.done) continue;  // the open one is drawn below, with its box
      root.appendChild(stepView(step));
    }
    const q = model.get("question") || {};
    if (q.id) root.appendChild(questionView(q));
    for (const notice of model.get("notices") || []) root.appendChild(make("div", { className: "notice", textContent: notice }));
    if (model.get("busy")) root.appendChild(make("div", { className: "busy", textContent: model.get("busy") + " …" }));
    if (model.get("finished")) root.appendChild(make("div", { className: "finished", textContent: model.get("finished") }));
    else if (model.get("can_next")) root.appendChild(make("div", { className: "row" }, [button("Next", "next")]));
    root.appendChild(make("div", { className: "footer", textContent: model.get("footer") }));
  }

  for (const name of ["title", "steps", "question", "notices", "busy", "can_next", "finished"]) model.on(`change:${name}`, draw);
  draw();
}

export default { render };
