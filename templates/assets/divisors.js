// The divisor calculator of a divisibility error: "valid values of `tp_size` for
// `heads` = 20: 1, 2, 4, 5, 10, 20". Values come from the address (the error's placeholders,
// as search links fill them) or are typed in. A value of the static table answers at once;
// any other runs calc.py's divisors in the calculator's worker (calc-client.js), started on
// first use.

const root = document.querySelector("[data-divisors]");
let config = null;

function el(tag, props, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

// The static table's answers, by value.
function tableAnswers() {
  const out = new Map();
  for (const row of root.querySelectorAll("tr[data-n]")) {
    const sizes = row.cells[1].textContent.split(",").map((s) => Number(s.trim()));
    out.set(row.dataset.n, sizes);
  }
  return out;
}

// calc.py's divisors of n, from the worker the page's calculators share.
async function divisors(n) {
  const { connect } = await import(config.client);
  const answer = await connect(config, [root.dataset.src]).ask({ op: "divisors", n });
  if (answer.error) throw new Error(answer.error);
  return answer.result;
}

// Under the message, "Your case" says at once what the values of the error mean.
function tellYourCase(lines) {
  const box = document.querySelector("[data-your-case]");
  if (!box || "answering" in box.dataset) return;
  box.dataset.answering = "";
  box.hidden = false;
  box.querySelector("[data-case-answer]").replaceChildren(...lines.map((node) => node.cloneNode(true)));
}

function build() {
  const { value, divisor, valueParam, divisorParam } = root.dataset;
  const query = new URLSearchParams(location.search);
  const field = (name, param, hint) => {
    const id = `divisors-${name}`;
    const input = el("input", { id, type: "text", inputMode: "numeric" });
    input.value = (param && query.get(param)?.trim()) || "";
    const label = el("label", { htmlFor: id }, el("code", {}, name));
    return [input, el("div", {}, label, input, el("small", {}, hint))];
  };
  const [valueInput, valueBox] = field(value, valueParam, "the value in your error");
  const [divisorInput, divisorBox] = field(divisor, divisorParam, "optional: what you used");
  const go = el("button", { type: "button", className: "calc-go" }, "Calculate");
  const out = el("div", { className: "calc-out", role: "status" });
  out.dataset.out = "divisors";
  const form = el("form", { className: "calc-form", noValidate: true });
  form.append(el("div", { className: "calc-fields" }, valueBox, divisorBox));
  form.append(el("p", { className: "calc-start" }, go), out);
  form.addEventListener("submit", (event) => event.preventDefault());
  root.prepend(form);
  const table = tableAnswers();
  let latest = 0;
  let fromAddress = Boolean(valueInput.value); // the first answer is then the page's "Your case"

  async function answer() {
    const ask = ++latest;
    const n = valueInput.value.trim();
    if (!n) {
      out.replaceChildren(el("p", { className: "muted" }, `Enter ${value}.`));
      return;
    }
    let sizes = table.get(n);
    if (!sizes) {
      out.replaceChildren(el("p", { className: "muted" }, "Loading the calculator…"));
      try {
        sizes = await divisors(n);
      } catch (error) {
        const text = error.message.replace(/^n(?= must)/, value);
        if (ask === latest) out.replaceChildren(el("p", { className: "calc-bad" }, text));
        return;
      }
    }
    if (ask !== latest) return;
    const head = el("strong", {}, `Valid values of ${divisor} for ${value} = ${n}: `);
    const lines = [el("p", {}, head, sizes.join(", "))];
    const used = divisorInput.value.trim();
    if (used) {
      const fits = sizes.includes(Number(used));
      const below = sizes.filter((s) => s < Number(used)).pop();
      const above = sizes.find((s) => s > Number(used));
      const near = [below, above].filter((s) => s !== undefined).join(" or ");
      const text = fits
        ? `${divisor} = ${used} divides ${n}: this check passes.`
        : `${divisor} = ${used} does not divide ${n}; the nearest valid values are ${near}.`;
      lines.push(el("p", { className: fits ? "calc-good" : "calc-bad" }, text));
    }
    out.replaceChildren(...lines);
    if (fromAddress) tellYourCase(lines);
    fromAddress = false;
  }

  go.addEventListener("click", answer);
  form.addEventListener("input", () => {
    fromAddress = false; // the visitor's own values: no longer what the error said
    answer();
  });
  if (table.has(valueInput.value.trim())) answer();
  else if (valueInput.value) {
    const hint =
      "Press Calculate: the divisors are computed in your browser " +
      "(Python through Pyodide, about 13 MB, downloaded once).";
    out.replaceChildren(el("p", { className: "muted" }, hint));
  }
}

async function main() {
  if (!root) return;
  try {
    const response = await fetch(root.dataset.src);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    config = await response.json();
  } catch (error) {
    const text = `The calculator could not load (${error.message}); the table applies.`;
    root.prepend(el("p", { className: "calc-bad" }, text));
    return;
  }
  build();
}

main();
