// Calculator widget: calc.py runs in Pyodide in a module worker started on first use only.

const LOAD_TIMEOUT_MS = 90_000;
const FIELDS = {
  heads: ["Attention heads", "num_attention_heads"],
  kv_heads: ["KV heads", "num_key_value_heads"],
  layers: ["Layers", "num_hidden_layers"],
  mla: ["MLA", "kv_lora_rank is set", "bool"],
  tp: ["Tensor parallel size", "--tensor-parallel-size"],
  dcp: ["DCP size", "--decode-context-parallel-size", "int", "1"],
  pcp: ["PCP size", "--prefill-context-parallel-size", "int", "1"],
  pp: ["Pipeline parallel size", "--pipeline-parallel-size", "int", "1"],
  dp: ["Data parallel size", "--data-parallel-size", "int", "1"],
  gpus_per_node: ["GPUs per node", "empty: not checked", "int", "", "8"],
  nnodes: ["Nodes", "--nnodes", "int", "1"],
  gpus: ["GPUs", "layouts using all of them"],
  prefill_tp: ["Prefill TP size", "producer"],
  decode_tp: ["Decode TP size", "consumer"],
  mode: ["MoRIIO mode", "READ: decode pulls", "mode"],
};
const MODEL = ["heads", "kv_heads", "layers", "mla"];
const widgets = [];
const worker = { instance: null, ready: false, failed: null, next: 1, timer: 0 };
let config;

function el(tag, props, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

const label = (name) => FIELDS[name]?.[0] || name;
const list = (values) => (values.length ? values.join(", ") : "none");

// A field's value: trimmed string, boolean, or undefined when empty.
function val(widget, name) {
  const input = widget.inputs[name];
  if (!input) return undefined;
  if (input.type === "checkbox") return input.checked;
  return input.value.trim() || undefined;
}

function field(widget, name) {
  const [text, hint, kind = "int", placeholder = "", value = ""] = FIELDS[name];
  const id = `${widget.id}-${name}`;
  let input;
  if (kind === "bool") input = el("input", { type: "checkbox", id });
  else if (kind === "mode") {
    input = el("select", { id }, el("option", { value: "read" }, "READ"));
    input.append(el("option", { value: "write" }, "WRITE"));
  } else input = el("input", { id, type: "text", inputMode: "numeric", placeholder, value });
  widget.inputs[name] = input;
  const parts = [el("label", { htmlFor: id }, text), el("small", {}, hint)];
  const box = kind === "bool" ? [input, el("div", {}, ...parts)] : [parts[0], input, parts[1]];
  return el("div", { className: kind === "bool" ? "calc-check" : "" }, ...box);
}

function modelPicker(widget) {
  const select = el("select", { id: `${widget.id}-model` });
  select.append(el("option", { value: "" }, "Choose…"));
  for (const m of config.models) {
    const text = `${m.name} (${m.heads} heads, ${m.kv_heads ?? m.heads} KV${m.mla ? ", MLA" : ""})`;
    select.append(el("option", { value: m.key }, text));
  }
  select.addEventListener("change", () => {
    const m = config.models.find((model) => model.key === select.value);
    if (m) setModel(widget, { ...m, kv_heads: m.kv_heads ?? m.heads });
  });
  const paste = el("textarea", { rows: 3, spellcheck: false });
  paste.placeholder = '{"num_attention_heads": 64, "num_key_value_heads": 8, …}';
  const note = el("small", { className: "calc-note", role: "status" });
  paste.addEventListener("input", () => {
    const read = readConfig(paste.value);
    note.textContent = read.note;
    if (!read.model) return;
    select.value = "";
    setModel(widget, read.model);
  });
  const details = el("details", {}, el("summary", {}, "…or paste a config.json"), paste, note);
  const text = el("label", { htmlFor: select.id }, "Model preset");
  return el("div", { className: "calc-model" }, text, select, details);
}

function setModel(widget, model) {
  for (const name of MODEL) {
    const input = widget.inputs[name];
    if (input?.type === "checkbox") input.checked = Boolean(model.mla);
    else if (input) input.value = model[name] ?? "";
  }
  changed(widget);
}

// A pasted config.json (multimodal: its text part).
function readConfig(text) {
  if (!text.trim()) return { note: "" };
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { note: `Not valid JSON: ${error.message}` };
  }
  const parts = [data?.text_config, data?.llm_config, data?.language_config, data];
  const cfg = parts.find((p) => p instanceof Object && p.num_attention_heads != null);
  if (!cfg) return { note: "No num_attention_heads here, nor in text_config." };
  const heads = cfg.num_attention_heads;
  const model = {
    heads,
    kv_heads: cfg.num_key_value_heads ?? heads,
    layers: cfg.num_hidden_layers ?? "",
    mla: (cfg.kv_lora_rank ?? data.kv_lora_rank) != null,
  };
  const layers = model.layers === "" ? "" : `, ${model.layers} layers`;
  const where = (model.mla ? ", MLA" : "") + (cfg === data ? "" : " (from its text config)");
  return { model, note: `Read ${heads} heads, ${model.kv_heads} KV heads${layers}${where}.` };
}

function fillFromQuery(widget) {
  const query = new URLSearchParams(location.search);
  for (const [name, input] of Object.entries(widget.inputs)) {
    const key = [widget.map[name], name].find((k) => k && query.has(k));
    const value = key && query.get(key).trim();
    if (!key) continue;
    if (input.type === "checkbox") input.checked = /^(1|true|yes|on)$/i.test(value);
    else input.value = value;
  }
}

function syncQuery(widget) {
  const url = new URL(location.href);
  for (const name of Object.keys(widget.inputs)) {
    const value = val(widget, name);
    if (value) url.searchParams.set(name, value);
    else url.searchParams.delete(name);
  }
  history.replaceState(null, "", url);
}

function build(root, index) {
  const [op, fields] = config.calculators[root.dataset.calc] || [];
  if (!op) return;
  const widget = { root, op, fields, id: `calc${index}`, inputs: {}, latest: 0 };
  const pairs = (root.dataset.inputs || "").split(" ").filter(Boolean);
  widget.map = Object.fromEntries(pairs.map((pair) => pair.split("=")));
  const form = el("form", { className: "calc-form", noValidate: true });
  form.addEventListener("submit", (event) => event.preventDefault());
  if (fields.some((f) => MODEL.includes(f))) form.append(modelPicker(widget));
  const order = [...MODEL.filter((f) => fields.includes(f)), ...fields];
  const names = [...new Set(order)];
  form.append(el("div", { className: "calc-fields" }, ...names.map((f) => field(widget, f))));
  const go = el("button", { type: "button", className: "calc-go" }, "Calculate");
  widget.progress = el("progress", { max: 4, value: 0, hidden: true });
  widget.out = el("div", { className: "calc-out", role: "status" });
  widget.out.textContent =
    "Press Calculate or change a value: vLLM's rules then run in your browser " +
    "(Python through Pyodide, about 13 MB, downloaded once).";
  form.append(el("p", { className: "calc-start" }, go, widget.progress), widget.out);
  root.prepend(form);
  fillFromQuery(widget);
  const first = () => widget.started || ask(widget);
  form.addEventListener("focusin", first);
  form.addEventListener("click", first);
  form.addEventListener("input", (event) => {
    if (Object.values(widget.inputs).includes(event.target)) changed(widget);
  });
  go.addEventListener("click", () => ask(widget));
  widgets.push(widget);
}

function say(widget, state, text, className = "calc-bad") {
  widget.root.dataset.state = state;
  widget.out.replaceChildren(el("p", { className }, text));
}

function start(widget) {
  widget.started = true;
  if (worker.failed) return say(widget, "failed", worker.failed);
  if (worker.ready) return;
  widget.progress.hidden = false;
  say(widget, "loading", "Loading the calculator…", "muted");
  if (worker.instance) return;
  try {
    worker.instance = new Worker(config.worker, { type: "module", name: "errorkb-calc" });
  } catch (error) {
    return fail(`The calculator's worker could not start: ${error.message}`);
  }
  worker.instance.addEventListener("message", ({ data }) => received(data));
  worker.instance.addEventListener("error", (event) => {
    event.preventDefault();
    const why = event.message || "its script was blocked by the page's policy, or is missing";
    fail(`The calculator's worker failed: ${why}.`);
  });
  worker.instance.postMessage({ init: { calc: config.module, pyodide: config.pyodide } });
  worker.timer = setTimeout(() => {
    const late = `The calculator did not finish loading in ${LOAD_TIMEOUT_MS / 1000} s`;
    if (!worker.ready && !worker.failed) fail(`${late}; check the network and reload.`);
  }, LOAD_TIMEOUT_MS);
}

function received(data) {
  const loading = widgets.filter((w) => w.started && !worker.ready);
  if (data.progress) {
    for (const w of loading) {
      w.progress.value += 1;
      say(w, "loading", data.progress, "muted");
    }
  } else if (data.ready !== undefined) {
    Object.assign(worker, { ready: true, failed: null });
    clearTimeout(worker.timer);
    for (const w of widgets) w.progress.hidden = true;
  } else if (data.failed) {
    fail(data.failed);
  } else if (!worker.failed) {
    const widget = widgets.find((w) => w.latest === data.id);
    if (widget) show(widget, data.answer);
  }
}

function fail(text) {
  worker.failed = text;
  clearTimeout(worker.timer);
  for (const w of widgets.filter((w) => w.started)) {
    w.progress.hidden = true;
    say(w, "failed", text);
  }
}

function changed(widget) {
  if (widget.root.dataset.sync !== undefined) syncQuery(widget);
  ask(widget);
}

function ask(widget) {
  if (!widget.started) start(widget);
  if (worker.failed || !worker.instance) return;
  const request = { op: widget.op };
  for (const name of widget.fields) {
    const value = val(widget, name);
    if (value !== undefined) request[name] = value;
  }
  widget.latest = worker.next++;
  widget.asked = performance.now();
  worker.instance.postMessage({ id: widget.latest, request });
}

function errorBlock(lead, error) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(error.values)) {
    if (!(value instanceof Object)) query.set(key, value);
  }
  const url = config.errors_url.replace("{}", error.id);
  const title = config.records[error.id];
  const href = `${url}?${query}`;
  const link = title ? el("a", { href, className: "calc-record" }, title) : error.id;
  const here = location.pathname === url ? " (this page)" : "";
  const message = el("code", { className: "message" }, `${error.exception}: ${error.message}`);
  const head = el("p", {}, `${lead} at ${error.stage} time: `, link, here);
  return el("div", { className: "calc-bad" }, head, message);
}

function line(text, values, key) {
  const value = el("span", {}, list(values));
  value.dataset.out = key;
  return el("p", {}, el("strong", {}, `${text}: `), value);
}

function summary(widget, result) {
  const v = (name) => val(widget, name);
  const kv = v("kv_heads") ? `${v("kv_heads")} KV heads` : "KV heads not given (as many)";
  const model = `${v("heads")} heads, ${kv}${v("mla") ? ", MLA" : ""}`;
  const out = [line(`Valid TP sizes for ${model}`, result.valid_tp_sizes, "valid-tp")];
  if ("first_error" in result) {
    let sizes = `TP ${v("tp")}`;
    for (const name of ["pp", "dp", "dcp", "pcp"]) {
      const value = v(name) || 1;
      if (widget.inputs[name] && (value != 1 || !["pp", "dp"].includes(name))) {
        sizes += `, ${name.toUpperCase()} ${value}`;
      }
    }
    const ok = el("p", { className: "calc-good" }, `${sizes}: no error at config or load time.`);
    out.push(result.first_error ? errorBlock(`${sizes} fails`, result.first_error) : ok);
    if (result.node) out.push(nodeLine(result.node));
    if (result.valid_dcp_sizes.length) {
      out.push(line(`Valid DCP sizes with TP ${v("tp")}`, result.valid_dcp_sizes, "valid-dcp"));
    }
  }
  if (result.layouts) out.push(layouts(result, v("gpus")));
  return out;
}

// Where the workers go: fits (true), too many for a node (false), or not known (null).
function nodeLine(node) {
  const className = { true: "calc-good", false: "calc-bad" }[node.fits] || "muted";
  const where = el("p", { className }, el("strong", {}, "Where it runs: "), node.note);
  where.dataset.out = "node";
  return where;
}

function layouts(result, gpus) {
  const shown = result.layouts.length;
  if (!shown) return el("p", {}, `No TP × PP × DP layout uses exactly ${gpus} GPUs here.`);
  const total = result.layouts_total;
  const some = shown < total ? ` (the first ${shown} of ${total})` : "";
  const table = el("table", { className: "calc-layouts" });
  table.append(el("caption", {}, `Layouts for ${gpus} GPUs, best first${some}`));
  const rows = [["TP", "PP", "DP", "DCP", "Why"]];
  for (const e of result.layouts) rows.push([e.tp, e.pp, e.dp, list(e.dcp), e.reason]);
  rows.forEach((cells, i) => {
    table.append(el("tr", {}, ...cells.map((c) => el(i ? "td" : "th", {}, String(c)))));
  });
  return table;
}

function moriio(widget, result) {
  if (result.first_error) return [errorBlock("These sizes fail", result.first_error)];
  const n = result.expected_acks;
  const text = `MoRIIO accepts these sizes; each prefill rank waits for ${n} release ACK`;
  return [el("p", { className: "calc-good" }, `${text}${n === 1 ? "" : "s"} per transfer.`)];
}

function show(widget, answer) {
  widget.progress.hidden = true;
  const error = answer.error;
  if (error) {
    const missing = /needs (.*)$/.exec(error);
    const names = missing && missing[1].split(", ").map(label).join(", ");
    say(widget, "invalid", missing ? `Enter: ${names}.` : error.replace(/^\w+(?= must)/, label));
  } else {
    widget.root.dataset.state = "answered";
    const render = widget.op === "moriio" ? moriio : summary;
    widget.out.replaceChildren(...render(widget, answer.result));
  }
  const ms = performance.now() - widget.asked;
  widget.root.dispatchEvent(new CustomEvent("calc:answer", { detail: { ms, answer } }));
}

async function main() {
  const roots = [...document.querySelectorAll("[data-calc]")];
  if (!roots.length) return;
  try {
    const response = await fetch(roots[0].dataset.src);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    config = await response.json();
  } catch (error) {
    const text = `The calculator could not load its data (${error.message}); the tables apply.`;
    for (const root of roots) root.prepend(el("p", { className: "calc-bad" }, text));
    return;
  }
  roots.forEach(build);
}

main();
